/* brightness_contrast: adjusts brightness and contrast of images, element-wise (DALI's
 * fn.brightness_contrast).
 *
 * Exports: const sl_op_def sl_op_brightness_contrast ("brightness_contrast", CPU).
 *
 * Per element, with every argument possibly per sample:
 *   out = brightness_shift * R + brightness * (contrast_center + contrast * (in - contrast_center))
 * where R is the output type's range (255 for uint8, 1 for float32) and contrast_center
 * defaults to half the input type's range (128 for uint8, 0.5 for float32). Computed as
 * in * mul + add with mul and add formed in float32, as DALI does; any channel count.
 *
 * Invariant: no state.
 */
#include "ops/image/color.h"

enum { A_BRIGHTNESS, A_BRIGHTNESS_SHIFT, A_CONTRAST, A_CONTRAST_CENTER, A_DTYPE, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_BRIGHTNESS] = {.name = "brightness",
                      .type = SL_ARG_FLOAT,
                      .def = "1.0",
                      .doc = "Brightness multiplier: 0 gives black (plus brightness_shift), 1 "
                             "leaves it unchanged.",
                      .flags = SL_ARG_TENSOR},
    [A_BRIGHTNESS_SHIFT] = {.name = "brightness_shift",
                            .type = SL_ARG_FLOAT,
                            .def = "0.0",
                            .doc = "Added to the result, as a fraction of the output type's "
                                   "range (255 for uint8, 1 for float32).",
                            .flags = SL_ARG_TENSOR},
    [A_CONTRAST] = {.name = "contrast",
                    .type = SL_ARG_FLOAT,
                    .def = "1.0",
                    .doc = "Stretches values away from contrast_center: 0 gives uniform "
                           "contrast_center, 1 leaves them unchanged.",
                    .flags = SL_ARG_TENSOR},
    [A_CONTRAST_CENTER] = {.name = "contrast_center",
                           .type = SL_ARG_FLOAT,
                           .doc = "The value contrast leaves unchanged. Unset: half the input "
                                  "type's range (128 for uint8, 0.5 for float32).",
                           .flags = SL_ARG_OPTIONAL | SL_ARG_TENSOR},
    [A_DTYPE] = {.name = "dtype",
                 .type = SL_ARG_DTYPE,
                 .doc = "Output type, uint8 or float32 (uint8 outputs are rounded and "
                        "saturated). Unset: the input type.",
                 .flags = SL_ARG_OPTIONAL},
};

static const sl_io_def inputs[] = {
    {"input", "Images, HWC (or FHWC / DHWC), uint8 or float32, any number of channels."},
};
static const sl_io_def outputs[] = {
    {"output", "Adjusted images, same shape and layout, of type dtype."},
};

static sl_status bc_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    return sl__color_init(ini, A_DTYPE);
}

static sl_status bc_setup(sl_ctx *ctx)
{
    return sl__color_setup(ctx, A_DTYPE);
}

static sl_status bc_setup_sample(sl_ctx *ctx, int i)
{
    return sl__color_setup_sample(ctx, i, 0, 0, NULL);
}

static sl_status bc_run_sample(sl_ctx *ctx, int i)
{
    sl__color_run_bc(ctx, i, A_DTYPE, sl_ctx_arg_float(ctx, A_BRIGHTNESS, i),
                     sl_ctx_arg_float(ctx, A_BRIGHTNESS_SHIFT, i),
                     sl_ctx_arg_float(ctx, A_CONTRAST, i), A_CONTRAST_CENTER);
    return SL_OK;
}

const sl_op_def sl_op_brightness_contrast = {
    .name = "brightness_contrast",
    .doc = "Adjusts brightness and contrast of images (DALI's brightness_contrast).\n\n"
           "out = brightness_shift * R + brightness * (contrast_center + contrast * (in - "
           "contrast_center)), element-wise, with R the output type's range (255 for uint8, 1 "
           "for float32) and contrast_center by default half the input type's range (128 for "
           "uint8, 0.5 for float32). Computed in float32 as in * (brightness * contrast) + "
           "(brightness_shift * R + brightness * (contrast_center - contrast * "
           "contrast_center)); uint8 outputs are rounded and saturated, float32 outputs are "
           "not clamped. Any number of channels.\n\n"
           "Differences from DALI: uint8 / float32 only; no per-frame arguments.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .init = bc_init,
    .setup = bc_setup,
    .setup_sample = bc_setup_sample,
    .run_sample = bc_run_sample,
};
