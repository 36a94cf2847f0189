/* cast.cu: the GPU run of cast (ops/tensor/cast.c): one elementwise conversion over the whole
 * batch, which is contiguous in both the input and the output (samples back to back).
 *
 * Exports (tensor_gpu.h): sl__gpu_convert.
 *
 * One thread per element, instantiated for each of the 144 (output, input) type pairs, with
 * tensor.cuh's sl__gconvert (convert.c's rules); the same type is a device-to-device copy.
 */
#include "ops/tensor/tensor.cuh"

template <class O, class I> struct cast_k {
    const I *in;
    O *out;
    int64_t n;

    SL_HD int64_t count(int s) const
    {
        return n;
    }
    SL_HD void operator()(int s, int64_t i) const
    {
        out[i] = sl__gconvert<O>(in[i]);
    }
};

template <class O, class I>
static sl_status cast_launch(sl_ctx *ctx, void *out, const void *in, int64_t n)
{
    cast_k<O, I> k = {(const I *)in, (O *)out, n};
    return sl_gpu_each(ctx, 1, n, k, "cast");
}

template <class O>
static sl_status cast_from(sl_ctx *ctx, void *out, const void *in, sl_dtype in_type, int64_t n)
{
    SL__GTYPE_SWITCH(in_type, I, return cast_launch<O, I>(ctx, out, in, n));
    return sl_fail(ctx, SL_EINTERNAL, "no GPU conversion from dtype %d", (int)in_type);
}

extern "C" sl_status sl__gpu_convert(sl_ctx *ctx, void *out, sl_dtype out_type, const void *in,
                                     sl_dtype in_type, int64_t n)
{
    if (n <= 0)
        return SL_OK;
    if (out_type == in_type)
        return sl_gpu_memcpy(ctx, out, in, (size_t)n * sl_dtype_size(in_type));
    SL__GTYPE_SWITCH(out_type, O, return cast_from<O>(ctx, out, in, in_type, n));
    return sl_fail(ctx, SL_EINTERNAL, "no GPU conversion to dtype %d", (int)out_type);
}
