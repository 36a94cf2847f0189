/* bench/ops_bench.c: the per-operator micro-benchmark (bench_ops): how many megapixels per
 * second one thread of each operator turns out, on the same realistic batch every iteration.
 *
 *   bench_ops --data DIR [--threads 1,<cpus>] [--runs 5] [--min-ms 200] [--retries 3]
 *             [--max-background 0.25] [--batch 64] [--filter TEXT] [--json PATH] [--md PATH]
 *             [--commit REV]
 *   bench_ops --list | --check-coverage
 *
 * Inputs: the first `batch` images that readers.file lists under DIR (a class-per-folder tree,
 * as bench/make_dataset.py makes: real photos, ~500x375 RGB), read and decoded once up front
 * with decoders.image. Each case then builds `external_source "in" -> <op> "op"` (decoders get
 * the encoded files, readers.file its DIR, random sources no input) and feeds the same batch to
 * every iteration: uint8 HWC images, the same as float32 in [0, 1], or the encoded files.
 *
 * Measurement: prefetch_queue_depth 1, so the feeding copies never overlap the operator;
 * 3 warm-up iterations, then `runs` windows of iterations until the op's busy time reaches
 * min-ms (or 4x that of wall time); the median window is reported. A window during which other
 * processes used more than max-background of the machine's CPUs (/proc/stat minus our own
 * rusage) is measured again, up to `retries` times, then kept and counted as noisy (a row ends
 * in "noisy" when half the windows or more were; the JSON has the counts).
 *
 * Per thread rates divide by the op node's busy time (sl_node_stats.busy_ms: thread time inside
 * its setup and run functions, summed over threads), which excludes feeding, output allocation
 * and scheduling; "op img/s" divides by the node's span (first setup to last sample, all
 * threads), so it shows how the op scales with threads. Megapixels are INPUT pixels
 * (elements / channels: H x W of an HWC or CHW image; for decoders the decoded image), "out MP"
 * the output's; a source without input (random.*, readers.file) counts its output.
 *
 * Exit status: 0; 1 when a case failed (named on stderr, "error" in the JSON) or, with
 * --check-coverage, when a CPU operator of the registry has no case (those that run the
 * application's function, SL_OP_CALLBACK, need none); 2 on bad usage.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <lmdb.h>
#include <sluice/sluice.h>

/* What a case's "in" node is fed (IN_NONE / IN_FILES: no external_source). */
typedef enum {
    IN_NONE,
    IN_FILES,
    IN_ENCODED,
    IN_U8,
    IN_F32,
    IN_INT,
    IN_BOXES, /* float32 (256, 4) boxes [x, y, w, h] inside [0, 1] */
    IN_BOXES_LABELS, /* IN_BOXES, then (a second input) int32 labels (256) from a constant */
    IN_U8_BOXES,     /* IN_U8, then one box (float32 (1, 4)) and its label from constants */
    IN_MASK_SELECT,  /* mask ids and polygons from constants, then IN_MAT as 2 vertices */
    IN_MAT,   /* float32 (2, 3) affine matrices */
    IN_SEQ,   /* the uint8 images with layout "FWC" (their rows as the frames of a sequence) */
    IN_KINDS
} in_kind;
static const char *const in_names[IN_KINDS] = {
    "none",   "files",  "encoded", "u8",          "f32", "int", "boxes", "boxes+labels",
    "u8+box", "select", "mat", "u8 FWC"};

typedef struct bench_case {
    const char *op;
    const char *config; /* label, ASCII */
    in_kind in;
    int nin;          /* positional inputs, all "in" (0..2) */
    const char *args; /* "name=json;name=json" for sl_graph_arg_json */
} bench_case;

#define IMAGENET_CMN "mean=[123.675,116.28,103.53];std=[58.395,57.12,57.375]"
#define IMAGENET_F "mean=[0.485,0.456,0.406];stddev=[0.229,0.224,0.225]"
/* 16 anchors of a 4 x 4 grid, [l, t, r, b]: a small stand-in, the work grows with their number */
#define SSD_ANCHORS                                                                                \
    "[0,0,0.25,0.25,0.25,0,0.5,0.25,0.5,0,0.75,0.25,0.75,0,1,0.25,"                             \
    "0,0.25,0.25,0.5,0.25,0.25,0.5,0.5,0.5,0.25,0.75,0.5,0.75,0.25,1,0.5,"                      \
    "0,0.5,0.25,0.75,0.25,0.5,0.5,0.75,0.5,0.5,0.75,0.75,0.75,0.5,1,0.75,"                      \
    "0,0.75,0.25,1,0.25,0.75,0.5,1,0.5,0.75,0.75,1,0.75,0.75,1,1]"
#define ROT10 "matrix=[1.0833,-0.191,20,0.191,1.0833,-40]"

static const bench_case cases[] = {
    {"decoders.image", "RGB (accurate IDCT)", IN_ENCODED, 1, ""},
    {"decoders.image", "RGB, fast IDCT", IN_ENCODED, 1, "use_fast_idct=true"},
    {"decoders.image", "GRAY", IN_ENCODED, 1, "output_type=\"GRAY\""},
    {"decoders.image_random_crop", "window only (DALI)", IN_ENCODED, 1, ""},
    {"decoders.image_random_crop", "size 224 (DCT-scaled)", IN_ENCODED, 1, "size=[224,224]"},
    {"decoders.image_crop", "224x224 centre window", IN_ENCODED, 1, "crop=[224,224]"},
    {"decoders.image_slice", "centre 50% window", IN_ENCODED, 1,
     "rel_start=[0.25,0.25];rel_shape=[0.5,0.5]"},
    {"experimental.decoders.image", "RGB (alias)", IN_ENCODED, 1, ""},
    {"experimental.decoders.image_crop", "224x224 centre (alias)", IN_ENCODED, 1, "crop=[224,224]"},
    {"experimental.decoders.image_random_crop", "window only (alias)", IN_ENCODED, 1, ""},
    {"experimental.decoders.image_slice", "centre 50% (alias)", IN_ENCODED, 1,
     "rel_start=[0.25,0.25];rel_shape=[0.5,0.5]"},
    {"readers.caffe", "the class folders' JPEGs as Datum in LMDB", IN_FILES, 0, ""},
    {"readers.caffe2", "the class folders' JPEGs as TensorProtos in LMDB", IN_FILES, 0, ""},
    {"readers.coco", "the class folders as COCO, 2 boxes each", IN_FILES, 0, ""},
    {"readers.file", "class folders, page cache", IN_FILES, 0, ""},
    {"readers.mxnet", "the class folders' JPEGs as one .rec, page cache", IN_FILES, 0, ""},
    {"readers.numpy", "32 u8 256x256x3 .npy, page cache", IN_FILES, 0, ""},
    {"readers.sequence", "class folders as streams, 1-frame sequences, decoded", IN_FILES, 0,
     "sequence_length=1"},
    {"readers.numpy", "same, centre 50% ROI (pread)", IN_FILES, 0,
     "rel_roi_start=[0.25,0.25];rel_roi_shape=[0.5,0.5];roi_axes=[0,1]"},
    {"readers.webdataset", "the class folders tarred (tar -cf), jpg", IN_NONE, 0,
     "ext=[\"jpg\"]"},
    {"readers.tfrecord", "the class folders' JPEGs as Examples, page cache", IN_NONE, 0,
     "feature_names=[\"image/encoded\",\"label\"];feature_kinds=[\"fixed\",\"fixed\"];"
     "feature_dtypes=[\"string\",\"int64\"];feature_ndims=[0,1];feature_shapes=[1];"
     "feature_defaults=[\"\",\"-1\"]"},
    {"external_source", "copy u8 HWC batch", IN_U8, 0, ""},
    {"resize", "LINEAR aa -> 224x224", IN_U8, 1, "size=[224,224]"},
    {"resize", "LINEAR no-aa -> 224x224", IN_U8, 1, "size=[224,224];antialias=false"},
    {"resize", "CUBIC -> 224x224", IN_U8, 1, "size=[224,224];interp_type=\"INTERP_CUBIC\""},
    {"resize", "LANCZOS3 -> 224x224", IN_U8, 1, "size=[224,224];interp_type=\"INTERP_LANCZOS3\""},
    {"resize", "NN -> 224x224", IN_U8, 1, "size=[224,224];interp_type=\"INTERP_NN\""},
    {"resize", "LINEAR shorter 256 (val)", IN_U8, 1, "resize_shorter=256"},
    {"resize", "LINEAR -> 224x224 f32 out", IN_U8, 1, "size=[224,224];dtype=\"float32\""},
    {"resize", "LINEAR f32 -> 224x224", IN_F32, 1, "size=[224,224]"},
    {"random_resized_crop", "224, LINEAR", IN_U8, 1, "size=[224,224]"},
    {"random_resized_crop", "224, LINEAR, f32", IN_F32, 1, "size=[224,224]"},
    {"crop", "224x224 centre", IN_U8, 1, "crop=[224,224]"},
    {"crop", "224x224 -> f32", IN_U8, 1, "crop=[224,224];dtype=\"float32\""},
    {"erase", "u8 two 50x50 boxes", IN_U8, 1,
     "anchor=[10,20,100,120];shape=[50,50,50,50];axis_names=\"HW\""},
    {"paste", "u8 ratio 1.5, fill 0", IN_U8, 1, "ratio=1.5;fill_value=[0]"},
    {"gaussian_blur", "u8 window 5", IN_U8, 1, "window_size=[5]"},
    {"laplacian", "u8 window 3", IN_U8, 1, "window_size=[3]"},
    {"noise.gaussian", "u8 stddev 10", IN_U8, 1, "stddev=10"},
    {"noise.shot", "u8 factor 20", IN_U8, 1, "factor=20"},
    {"noise.salt_and_pepper", "u8 prob 0.05", IN_U8, 1, "prob=0.05"},
    {"jpeg_compression_distortion", "quality 50", IN_U8, 1, "quality=50"},
    {"grid_mask", "tile 51, ratio 0.38, angle 2.68", IN_U8, 1,
     "tile=51;ratio=0.38158387;angle=2.6810782"},
    {"jitter", "nDegree 2, NN", IN_U8, 1, "nDegree=2"},
    {"water", "defaults, NN", IN_U8, 1, ""},
    {"sphere", "defaults, NN", IN_U8, 1, ""},
    {"roi_random_crop", "crop 100x100 around a 50x50 ROI", IN_U8, 1,
     "crop_shape=[100,100,3];roi_start=[20,20,0];roi_shape=[50,50,3]"},
    {"multi_paste", "2 inputs, 224x224 canvas", IN_U8, 2, "output_size=[224,224]"},
    {"resize_crop_mirror", "shorter 256, crop 224, mirror", IN_U8, 1,
     "resize_shorter=256;crop=[224,224];mirror=1"},
    {"fast_resize_crop_mirror", "shorter 256, crop 224, mirror", IN_U8, 1,
     "resize_shorter=256;crop=[224,224];mirror=1"},
    {"crop_mirror_normalize", "224 mirror -> f32 CHW", IN_U8, 1,
     "crop=[224,224];mirror=1;" IMAGENET_CMN},
    {"crop_mirror_normalize", "224 no mirror -> f32 CHW", IN_U8, 1, "crop=[224,224];" IMAGENET_CMN},
    {"crop_mirror_normalize", "224 mirror -> f16 CHW", IN_U8, 1,
     "crop=[224,224];mirror=1;dtype=\"float16\";" IMAGENET_CMN},
    {"crop_mirror_normalize", "224 mirror -> f32 HWC", IN_U8, 1,
     "crop=[224,224];mirror=1;output_layout=\"HWC\";" IMAGENET_CMN},
    {"crop_mirror_normalize", "whole image -> f32 CHW", IN_U8, 1, IMAGENET_CMN},
    {"flip", "horizontal", IN_U8, 1, "horizontal=1"},
    {"flip", "vertical", IN_U8, 1, "horizontal=0;vertical=1"},
    {"flip", "both", IN_U8, 1, "horizontal=1;vertical=1"},
    {"rotate", "15 deg LINEAR, fits, fill 0", IN_U8, 1, "angle=15;fill_value=0"},
    {"rotate", "15 deg LINEAR, keep_size", IN_U8, 1, "angle=15;keep_size=true"},
    {"rotate", "15 deg NN, fits, fill 0", IN_U8, 1,
     "angle=15;fill_value=0;interp_type=\"INTERP_NN\""},
    {"warp_affine", "rot 10 + scale, LINEAR", IN_U8, 1, ROT10},
    {"warp_affine", "rot 10 + scale, NN", IN_U8, 1, ROT10 ";interp_type=\"INTERP_NN\""},
    {"warp_affine", "rot 10 + scale -> 224x224", IN_U8, 1, ROT10 ";size=[224,224]"},
    {"color_twist", "h20 s1.2 b1.1 c0.9", IN_U8, 1,
     "hue=20;saturation=1.2;brightness=1.1;contrast=0.9"},
    {"color_twist", "h20 s1.2 b1.1 c0.9, f32", IN_F32, 1,
     "hue=20;saturation=1.2;brightness=1.1;contrast=0.9"},
    {"hsv", "h20 s1.2 v0.9", IN_U8, 1, "hue=20;saturation=1.2;value=0.9"},
    {"hsv", "h20 s1.2 v0.9, f32", IN_F32, 1, "hue=20;saturation=1.2;value=0.9"},
    {"hue", "20 deg", IN_U8, 1, "hue=20"},
    {"saturation", "1.2", IN_U8, 1, "saturation=1.2"},
    {"brightness", "1.2", IN_U8, 1, "brightness=1.2"},
    {"contrast", "0.8", IN_U8, 1, "contrast=0.8"},
    {"brightness_contrast", "b1.2 c0.8", IN_U8, 1, "brightness=1.2;contrast=0.8"},
    {"brightness_contrast", "b1.2 c0.8, f32", IN_F32, 1, "brightness=1.2;contrast=0.8"},
    {"color_space_conversion", "RGB -> YCbCr", IN_U8, 1,
     "image_type=\"RGB\";output_type=\"YCbCr\""},
    {"color_space_conversion", "RGB -> GRAY", IN_U8, 1, "image_type=\"RGB\";output_type=\"GRAY\""},
    {"color_space_conversion", "RGB -> BGR", IN_U8, 1, "image_type=\"RGB\";output_type=\"BGR\""},
    {"color_space_conversion", "YCbCr -> RGB", IN_U8, 1,
     "image_type=\"YCbCr\";output_type=\"RGB\""},
    {"cast", "u8 -> f32", IN_U8, 1, "dtype=\"float32\""},
    {"cast", "u8 -> f16", IN_U8, 1, "dtype=\"float16\""},
    {"cast", "f32 -> u8", IN_F32, 1, "dtype=\"uint8\""},
    {"cast", "f32 -> f16", IN_F32, 1, "dtype=\"float16\""},
    {"copy", "u8", IN_U8, 1, ""},
    {"constant", "224x224x3 u8, one value", IN_NONE, 0,
     "idata=[7];shape=[224,224,3];dtype=\"uint8\""},
    {"constant", "1x1x3 f32 (per-sample overhead)", IN_NONE, 0,
     "fdata=[123.675,116.28,103.53];shape=[1,1,3]"},
    {"transpose", "u8 HWC -> CHW", IN_U8, 1, "perm=[2,0,1]"},
    {"transpose", "f32 HWC -> CHW", IN_F32, 1, "perm=[2,0,1]"},
    {"pad", "u8 HW to batch max", IN_U8, 1, "axis_names=\"HW\""},
    {"pad", "u8 HW align 32", IN_U8, 1, "axis_names=\"HW\";align=32;shape=[1,1]"},
    {"normalize", "f32, per-channel mean/std given", IN_F32, 1, "axis_names=\"HW\";" IMAGENET_F},
    {"normalize", "f32, per-sample channel stats", IN_F32, 1, "axis_names=\"HW\""},
    {"normalize", "u8 -> f32, scalar mean/std", IN_U8, 1, "mean=118;stddev=58"},
    {"slice", "u8 centre 80%", IN_U8, 1, "rel_start=[0.1,0.1];rel_shape=[0.8,0.8]"},
    {"slice", "u8 120%, pad", IN_U8, 1,
     "rel_start=[-0.1,-0.1];rel_shape=[1.2,1.2];out_of_bounds_policy=\"pad\""},
    {"tensor_subscript", "u8 x[::-1, :, ::-1] (flip H, BGR)", IN_U8, 1,
     "subscript=[\"::-1\",\":\",\"::-1\"]"},
    {"tensor_subscript", "u8 x[10:-10, ::2, 0]", IN_U8, 1, "subscript=[\"10:-10\",\"::2\",\"0\"]"},
    {"reshape", "u8 HWC -> flat", IN_U8, 1, "shape=[-1];layout=\"\""},
    {"segmentation.random_mask_pixel", "u8 HWC as a 3-D mask, foreground", IN_U8, 1,
     "foreground=1;threshold=128"},
    {"segmentation.random_object_bbox", "u8 HWC as 3-D labels, 2 classes, 4 largest", IN_U8, 1,
     "format=\"box\";output_class=true;background=0;classes=[200,250];k_largest=4"},
    {"segmentation.select_masks", "2 polygons, 1 kept", IN_MASK_SELECT, 3, ""},
    {"shapes", "u8 HWC, int64 (metadata only)", IN_U8, 1, ""},
    {"cat", "2x u8 along C", IN_U8, 2, "axis_name=\"C\""},
    {"ssd_random_crop", "u8 with one box", IN_U8_BOXES, 3, "num_attempts=5"},
    {"stack", "2x u8, new axis F", IN_U8, 2, "axis=0;axis_name=\"F\""},
    {"bb_flip", "256 boxes xywh, horizontal", IN_BOXES, 1, ""},
    {"box_encoder", "256 boxes, 16 anchors, offsets", IN_BOXES_LABELS, 2,
     "anchors=" SSD_ANCHORS ";offset=true;scale=300;stds=[0.1,0.1,0.2,0.2]"},
    {"bbox_paste", "256 boxes xywh, ratio 2", IN_BOXES, 1, "ratio=2.0;paste_x=0.25"},
    {"coord_flip", "2 x 3-D points, flip x", IN_MAT, 1, ""},
    {"coord_transform", "u8 HWC as 3-D points, M 3x3", IN_U8, 1,
     "M=[0,0,1,0,1,0,1,0,0];dtype=\"uint8\""},
    {"coord_transform", "256 x 4-D f32 points, MT 2x5", IN_BOXES, 1,
     "MT=[1,0,0,0,0.5,0,1,0,0,0.25]"},
    {"random_bbox_crop", "256 boxes xywh, threshold 0", IN_BOXES, 1,
     "ltrb=false;scaling=[0.3,1.0];aspect_ratio=[0.5,2.0];allow_no_crop=false"},
    {"transforms.combine", "2 x (2, 3)", IN_MAT, 2, ""},
    {"transforms.crop", "2-D", IN_NONE, 0, "from_start=[0.1,0.2];to_start=[0.3,0.2]"},
    {"transforms.rotation", "3-D about an axis, centre", IN_NONE, 0,
     "angle=30;axis=[0.4,0.3,0.1];center=[1,2,3]"},
    {"transforms.scale", "2-D, centre, with input", IN_MAT, 1, "scale=[2,3];center=[0.5,0.5]"},
    {"transforms.shear", "2-D angles", IN_NONE, 0, "angles=[30,10]"},
    {"transforms.translation", "2-D", IN_NONE, 0, "offset=[2,3]"},
    {"arithmetic", "u8 mul 1/255 -> f32", IN_U8, 1, "op=\"mul\";scalar=0.00392156862745098"},
    {"arithmetic", "u8 add u8", IN_U8, 2, "op=\"add\""},
    {"arithmetic", "f32 sub 0.5", IN_F32, 1, "op=\"sub\";scalar=0.5"},
    {"arithmetic", "f32 fdiv f32", IN_F32, 2, "op=\"fdiv\""},
    {"arithmetic", "f32 clamp", IN_F32, 1, "op=\"clamp\";lo=0.1;hi=0.9"},
    {"arithmetic", "f32 sqrt", IN_F32, 1, "op=\"sqrt\""},
    {"arithmetic", "f32 exp", IN_F32, 1, "op=\"exp\""},
    {"math.abs", "f32", IN_F32, 1, ""},
    {"math.clamp", "f32", IN_F32, 1, "lo=0.1;hi=0.9"},
    {"math.exp", "f32", IN_F32, 1, ""},
    {"math.log", "f32", IN_F32, 1, ""},
    {"math.max", "f32, f32", IN_F32, 2, ""},
    {"math.min", "f32, 0.5", IN_F32, 1, "scalar=0.5"},
    {"math.pow", "f32 ** 2.2", IN_F32, 1, "scalar=2.2"},
    {"math.sqrt", "f32", IN_F32, 1, ""},
    {"experimental.tensor_resize", "u8 HWC LINEAR -> 224x224", IN_U8, 1, "sizes=[224,224];axes=[0,1]"},
    {"peek_image_shape", "JPEG headers", IN_ENCODED, 1, ""},
    {"experimental.peek_image_shape", "JPEG headers (alias)", IN_ENCODED, 1, ""},
    /* writes <i>-bench-0.ppm files into the working directory */
    {"dump_image", "u8 HWC -> ASCII PPM files", IN_U8, 1, "suffix=\"bench\""},
    {"element_extract", "u8 FWC, frames 0 and 2", IN_SEQ, 1, "element_map=[0,2]"},
    {"get_property", "layout of u8 HWC", IN_U8, 1, "key=\"layout\""},
    {"per_frame", "u8 HWC -> FWC", IN_U8, 1, "replace=true"},
    {"permute_batch", "u8 HWC, reversed pairs", IN_U8, 1, "indices=[1]"},
    {"sequence_rearrange", "u8 FWC, 3 frames reversed", IN_SEQ, 1, "new_order=[2,1,0]"},
    {"batch_permutation", "batch of 64", IN_NONE, 0, ""},
    {"cast_like", "u8 like u8", IN_U8, 2, ""},
    {"expand_dims", "u8 HWC -> FHWC", IN_U8, 1, "axes=[0]"},
    {"lookup_table", "u8 -> f32, 3 keys", IN_U8, 1, "keys=[0,128,255];values=[0.5,1.5,2.5]"},
    {"one_hot", "u8 HWC, 4 classes", IN_U8, 1, "num_classes=4;dtype=\"uint8\""},
    {"reinterpret", "u8 HWC -> flat u8", IN_U8, 1, "dtype=\"uint8\";shape=[-1]"},
    {"squeeze", "f32 HWC, no axes", IN_F32, 1, ""},
    {"math.acos", "f32", IN_F32, 1, ""},
    {"math.acosh", "f32", IN_F32, 1, ""},
    {"math.asin", "f32", IN_F32, 1, ""},
    {"math.asinh", "f32", IN_F32, 1, ""},
    {"math.atan", "f32", IN_F32, 1, ""},
    {"math.atanh", "f32", IN_F32, 1, ""},
    {"math.cbrt", "f32", IN_F32, 1, ""},
    {"math.ceil", "f32", IN_F32, 1, ""},
    {"math.cos", "f32", IN_F32, 1, ""},
    {"math.cosh", "f32", IN_F32, 1, ""},
    {"math.fabs", "f32", IN_F32, 1, ""},
    {"math.floor", "f32", IN_F32, 1, ""},
    {"math.log10", "f32", IN_F32, 1, ""},
    {"math.log2", "f32", IN_F32, 1, ""},
    {"math.rsqrt", "f32", IN_F32, 1, ""},
    {"math.sin", "f32", IN_F32, 1, ""},
    {"math.sinh", "f32", IN_F32, 1, ""},
    {"math.tan", "f32", IN_F32, 1, ""},
    {"math.tanh", "f32", IN_F32, 1, ""},
    {"math.atan2", "f32, f32", IN_F32, 2, ""},
    {"math.fpow", "f32 ** 2.2", IN_F32, 1, "scalar=2.2"},
    {"reductions.max", "u8, per-channel (HW)", IN_U8, 1, "axes=[0,1]"},
    {"reductions.mean", "u8, per-channel (HW)", IN_U8, 1, "axes=[0,1]"},
    {"reductions.mean_square", "f32, per-channel (HW)", IN_F32, 1, "axes=[0,1]"},
    {"reductions.min", "u8, all axes", IN_U8, 1, ""},
    {"reductions.rms", "f32, all axes", IN_F32, 1, ""},
    {"reductions.std_dev", "f32, no axes (mean = data)", IN_F32, 2, "axes=[]"},
    {"reductions.sum", "u8, per-channel (HW)", IN_U8, 1, "axes=[0,1]"},
    {"reductions.sum", "f32, per-row (W)", IN_F32, 1, "axes=[1]"},
    {"reductions.variance", "f32, no axes (mean = data)", IN_F32, 2, "axes=[]"},
    {"random.uniform", "scalar per sample", IN_NONE, 0, "range=[-15,15]"},
    {"random.uniform", "224x224x3 f32", IN_NONE, 0, "shape=[224,224,3]"},
    {"random.normal", "scalar per sample", IN_NONE, 0, ""},
    {"random.normal", "224x224x3 f32", IN_NONE, 0, "shape=[224,224,3]"},
    {"random.coin_flip", "scalar per sample", IN_NONE, 0, ""},
    {"random.coin_flip", "224x224x3 u8", IN_NONE, 0, "shape=[224,224,3];dtype=\"uint8\""},
    {"random.choice", "n = 1000, scalar", IN_INT, 1, ""},
    {"_conditional.split", "u8 HWC, every sample true (copy)", IN_U8, 1, "predicate=true"},
    {"_conditional.not_", "int32 scalar -> bool", IN_INT, 1, ""},
    {"_conditional.validate_logical", "int32 scalar (copy)", IN_INT, 1, ""},
};
#define NUM_CASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct options {
    const char *data, *filter, *json, *md, *commit;
    int threads[8], nthreads;
    int runs, batch, retries, ncpu;
    double min_ms, max_background;
} options;

/* One batch to feed, owned. pixels: sum over samples of elements / channels (H x W). */
typedef struct feed_set {
    sl_feed feed;
    int64_t *shapes;
    void **data;
    double pixels;
} feed_set;

/* Medians over the windows of one (case, threads). */
typedef struct result {
    double in_mp, out_mp;           /* per image */
    double mp_s, out_mp_s, img_s_t; /* per busy thread-second */
    double op_img_s, pipe_img_s;    /* per second of node span / of wall time */
    double background;              /* share of the CPUs others used during a window */
    int retried, noisy;             /* windows measured again; kept although still noisy */
    char error[512];
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Elements / channels of sample i: H x W for HWC, CHW, FHWC; the element count otherwise. */
static double sample_pixels(int ndim, const char *layout, const int64_t *shape)
{
    double n = 1.0;
    for (int d = 0; d < ndim; d++)
        n *= (double)shape[d];
    const char *c = layout ? strchr(layout, 'C') : NULL;
    if (c && (int)strlen(layout) == ndim)
        return shape[c - layout] ? n / (double)shape[c - layout] : 0.0;
    return ndim == 3 && (!layout || !layout[0]) && shape[2] ? n / (double)shape[2] : n;
}

static double batch_pixels(const sl_batch *b)
{
    double px = 0.0;
    for (int i = 0; i < sl_batch_size(b); i++)
        px += sample_pixels(sl_batch_ndim(b), sl_batch_layout(b), sl_batch_shape(b, i));
    return px;
}

/* ---- inputs ---------------------------------------------------------------------------- */

static int feed_alloc(feed_set *fs, int n, int ndim, sl_dtype dtype, const char *layout)
{
    fs->shapes = calloc((size_t)n * (ndim ? ndim : 1), sizeof(int64_t));
    fs->data = calloc((size_t)n, sizeof(void *));
    fs->feed = (sl_feed){.num_samples = n,
                         .ndim = ndim,
                         .dtype = dtype,
                         .layout = layout,
                         .shapes = fs->shapes,
                         .data = (const void *const *)fs->data};
    return fs->shapes && fs->data ? 0 : -1;
}

static void feed_free(feed_set *fs)
{
    for (int i = 0; fs->data && i < fs->feed.num_samples; i++)
        free(fs->data[i]);
    free(fs->data);
    free(fs->shapes);
}

/* Copies output `b` (one feed set) into fs; also the float32 / 255 copy when f32 != NULL. */
static int copy_batch(const sl_batch *b, feed_set *fs, feed_set *f32, const char *layout)
{
    int n = sl_batch_size(b), nd = sl_batch_ndim(b);
    if (feed_alloc(fs, n, nd, sl_batch_dtype(b), layout) ||
        (f32 && feed_alloc(f32, n, nd, SL_DTYPE_FLOAT32, layout)))
        return -1;
    for (int i = 0; i < n; i++) {
        size_t numel = (size_t)sl_batch_sample_numel(b, i);
        size_t bytes = numel * sl_dtype_size(sl_batch_dtype(b));
        memcpy(fs->shapes + (size_t)i * nd, sl_batch_shape(b, i), (size_t)nd * sizeof(int64_t));
        if (!(fs->data[i] = malloc(bytes ? bytes : 1)))
            return -1;
        memcpy(fs->data[i], sl_batch_sample_data(b, i), bytes);
        fs->pixels += sample_pixels(nd, layout, sl_batch_shape(b, i));
        if (!f32)
            continue;
        memcpy(f32->shapes + (size_t)i * nd, sl_batch_shape(b, i), (size_t)nd * sizeof(int64_t));
        float *dst = malloc(numel ? numel * sizeof(float) : 1);
        if (!(f32->data[i] = dst))
            return -1;
        const uint8_t *src = sl_batch_sample_data(b, i);
        for (size_t k = 0; k < numel; k++)
            dst[k] = (float)src[k] * (1.0f / 255.0f);
        f32->pixels = fs->pixels;
    }
    return 0;
}

/* Reads and decodes the first `batch` images under DIR once: encoded, uint8 and float32 sets;
 * the encoded set counts the decoded pixels. */
static int load_inputs(const options *o, feed_set sets[IN_KINDS])
{
    sl_graph *g = NULL;
    sl_pipeline *p = NULL;
    sl_pipeline_options po;
    sl_pipeline_options_init(&po);
    po.batch_size = o->batch;
    int rc = -1;
    if (sl_graph_create(&g) || sl_graph_add(g, "readers.file", "reader", NULL) ||
        sl_graph_arg_str(g, "reader", "file_root", o->data) ||
        sl_graph_add(g, "decoders.image", "dec", NULL) || sl_graph_input(g, "dec", "reader:0") ||
        sl_graph_output(g, "reader:0") || sl_graph_output(g, "dec") ||
        sl_pipeline_create(g, &po, &p)) {
        fprintf(stderr, "bench_ops: %s\n", sl_last_error());
        goto fail;
    }
    if (sl_pipeline_build(p) || sl_pipeline_run(p)) {
        fprintf(stderr, "bench_ops: reading %s: %s\n", o->data, sl_pipeline_error(p));
        goto fail;
    }
    if (copy_batch(sl_pipeline_output(p, 0), &sets[IN_ENCODED], NULL, NULL) ||
        copy_batch(sl_pipeline_output(p, 1), &sets[IN_U8], &sets[IN_F32], "HWC") ||
        copy_batch(sl_pipeline_output(p, 1), &sets[IN_SEQ], NULL, "FWC")) {
        fprintf(stderr, "bench_ops: out of memory\n");
        goto fail;
    }
    sets[IN_ENCODED].pixels = sets[IN_U8].pixels;
    if (feed_alloc(&sets[IN_INT], o->batch, 0, SL_DTYPE_INT32, NULL))
        goto fail;
    for (int i = 0; i < o->batch; i++) {
        int32_t *v = malloc(sizeof *v);
        if (!(sets[IN_INT].data[i] = v))
            goto fail;
        *v = 1000;
    }
    if (feed_alloc(&sets[IN_BOXES], o->batch, 2, SL_DTYPE_FLOAT32, NULL) ||
        feed_alloc(&sets[IN_MAT], o->batch, 2, SL_DTYPE_FLOAT32, NULL))
        goto fail;
    uint32_t lcg = 12345;
    for (int i = 0; i < o->batch; i++) {
        float *b = malloc(256 * 4 * sizeof *b), *m = malloc(6 * sizeof *m);
        sets[IN_BOXES].data[i] = b;
        sets[IN_MAT].data[i] = m;
        if (!b || !m)
            goto fail;
        sets[IN_BOXES].shapes[2 * i] = 256;
        sets[IN_BOXES].shapes[2 * i + 1] = 4;
        sets[IN_MAT].shapes[2 * i] = 2;
        sets[IN_MAT].shapes[2 * i + 1] = 3;
        for (int k = 0; k < 256 * 4; k++) {
            lcg = lcg * 1664525u + 1013904223u;
            b[k] = (float)(lcg >> 8) * (0.5f / 16777216.0f); /* [0, 0.5): x + w < 1 */
        }
        const float mat[6] = {0.9f, -0.1f, 3.0f, 0.2f, 1.1f, -2.0f};
        memcpy(m, mat, sizeof mat);
    }
    sets[IN_BOXES].pixels = 256.0 * 4.0 * o->batch;
    sets[IN_BOXES_LABELS] = sets[IN_BOXES]; /* shared: freed once, below */
    sets[IN_U8_BOXES] = sets[IN_U8];
    sets[IN_MAT].pixels = 6.0 * o->batch;
    sets[IN_MASK_SELECT] = sets[IN_MAT];
    rc = 0;
fail:
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    return rc;
}

/* ---- one case -------------------------------------------------------------------------- */

/* Sets the "name=json;..." arguments of node "op". */
static sl_status set_args(sl_graph *g, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return SL_EINVAL;
        *eq = '\0';
        sl_status st = sl_graph_arg_json(g, "op", kv, eq + 1);
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* readers.coco's case: an annotation file listing every *.jpg one folder below DIR, two boxes
 * each, written once to a temporary file (removed at exit). Returns its path or NULL. */
static char coco_json[64];
static void remove_coco_json(void)
{
    unlink(coco_json);
}

static const char *coco_annotations(const char *dir)
{
    if (coco_json[0])
        return coco_json;
    snprintf(coco_json, sizeof coco_json, "/tmp/sluice-bench-coco-XXXXXX");
    int fd = mkstemp(coco_json);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    DIR *top = opendir(dir);
    if (!f || !top) {
        if (f)
            fclose(f);
        if (top)
            closedir(top);
        return NULL;
    }
    atexit(remove_coco_json);
    fputs("{\"categories\": [{\"id\": 1}, {\"id\": 2}], \"images\": [", f);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(top))) {
        char sub[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *d = opendir(sub);
        struct dirent *g;
        while (d && (g = readdir(d))) {
            size_t len = strlen(g->d_name);
            if (len < 4 || strcmp(g->d_name + len - 4, ".jpg") != 0)
                continue;
            fprintf(f, "%s{\"id\": %d, \"file_name\": \"%s/%s\", \"width\": 64, \"height\": 64}",
                    n ? ", " : "", n, e->d_name, g->d_name);
            n++;
        }
        if (d)
            closedir(d);
    }
    closedir(top);
    fputs("], \"annotations\": [", f);
    for (int k = 0; k < 2 * n; k++)
        fprintf(f, "%s{\"image_id\": %d, \"category_id\": %d, \"bbox\": [1, 2, 30, 40]}",
                k ? ", " : "", k / 2, 1 + k % 2);
    fputs("]}", f);
    return fclose(f) == 0 ? coco_json : NULL;
}

/* readers.tfrecord's case: every *.jpg one folder below DIR as a record of an Example
 * {"image/encoded": its bytes, "label": its folder's number}, and the file's index. */
static char tfr_path[64], tfr_index[80];
static void remove_tfrecord(void)
{
    unlink(tfr_path);
    unlink(tfr_index);
}

static void put_varint(FILE *f, uint64_t v)
{
    do {
        fputc((int)((v & 0x7F) | (v > 0x7F ? 0x80 : 0)), f);
        v >>= 7;
    } while (v);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v > 0x7F) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The Example's bytes: Features{ entry{key, Feature{BytesList}}, entry{key, Feature{Int64List}} }. */
static uint8_t *tfr_example(const uint8_t *img, size_t n, int label, size_t *len)
{
    FILE *m = NULL;
    char *buf = NULL;
    size_t blen = 0;
    static const char k1[] = "image/encoded", k2[] = "label";
    size_t bl = 1 + varint_len(n) + n;          /* BytesList */
    size_t f1 = 1 + varint_len(bl) + bl;        /* Feature */
    size_t e1 = 2 + (sizeof k1 - 1) + 1 + varint_len(f1) + f1;
    size_t il = 1 + varint_len((uint64_t)label); /* Int64List, unpacked */
    size_t f2 = 1 + varint_len(il) + il;
    size_t e2 = 2 + (sizeof k2 - 1) + 1 + varint_len(f2) + f2;
    size_t fs = 1 + varint_len(e1) + e1 + 1 + varint_len(e2) + e2;
    if (!(m = open_memstream(&buf, &blen)))
        return NULL;
    fputc(0x0a, m), put_varint(m, fs);                                 /* Example.features */
    fputc(0x0a, m), put_varint(m, e1);                                 /* map entry */
    fputc(0x0a, m), put_varint(m, sizeof k1 - 1), fputs(k1, m);        /* key */
    fputc(0x12, m), put_varint(m, f1), fputc(0x0a, m), put_varint(m, bl); /* bytes_list */
    fputc(0x0a, m), put_varint(m, n), fwrite(img, 1, n, m);
    fputc(0x0a, m), put_varint(m, e2);
    fputc(0x0a, m), put_varint(m, sizeof k2 - 1), fputs(k2, m);
    fputc(0x12, m), put_varint(m, f2), fputc(0x1a, m), put_varint(m, il); /* int64_list */
    fputc(0x08, m), put_varint(m, (uint64_t)label);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    *len = blen;
    return (uint8_t *)buf;
}

static bool tfr_record(FILE *out, const char *path, int label)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    uint8_t *img = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            uint8_t *p = realloc(img, cap = cap ? 2 * cap : 65536);
            if (!p)
                break;
            img = p;
        }
        got = fread(img + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    size_t len = 0;
    uint8_t *ex = img ? tfr_example(img, n, label, &len) : NULL;
    free(img);
    if (!ex)
        return false;
    uint8_t hdr[12];
    for (int i = 0; i < 8; i++)
        hdr[i] = (uint8_t)((uint64_t)len >> (8 * i));
    uint32_t c = sl_tfrecord_masked_crc(hdr, 8), d = sl_tfrecord_masked_crc(ex, len);
    for (int i = 0; i < 4; i++)
        hdr[8 + i] = (uint8_t)(c >> (8 * i));
    uint8_t foot[4] = {(uint8_t)d, (uint8_t)(d >> 8), (uint8_t)(d >> 16), (uint8_t)(d >> 24)};
    bool ok = fwrite(hdr, 1, 12, out) == 12 && fwrite(ex, 1, len, out) == len &&
              fwrite(foot, 1, 4, out) == 4;
    free(ex);
    return ok;
}

static bool tfrecord_file(const char *dir)
{
    if (tfr_path[0])
        return true;
    snprintf(tfr_path, sizeof tfr_path, "/tmp/sluice-bench-tfr-XXXXXX");
    int fd = mkstemp(tfr_path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    DIR *top = opendir(dir);
    bool ok = f && top;
    snprintf(tfr_index, sizeof tfr_index, "%s.idx", tfr_path);
    atexit(remove_tfrecord);
    for (int label = 0; ok;) {
        struct dirent *e = readdir(top);
        if (!e)
            break;
        if (e->d_name[0] == '.')
            continue;
        char sub[4096], path[8192];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *d = opendir(sub);
        struct dirent *g;
        while (ok && d && (g = readdir(d))) {
            size_t len = strlen(g->d_name);
            if (len < 4 || strcmp(g->d_name + len - 4, ".jpg") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", sub, g->d_name);
            ok = tfr_record(f, path, label);
        }
        if (d)
            closedir(d);
        label++;
    }
    if (top)
        closedir(top);
    if (f && fclose(f) != 0)
        ok = false;
    return ok && sl_tfrecord_index(tfr_path, tfr_index, NULL) == SL_OK;
}

/* readers.webdataset's case: DIR archived by the system's tar (keys "./class/name"). */
static char wds_path[64];
static void remove_wds(void)
{
    unlink(wds_path);
}

static bool wds_file(const char *dir)
{
    if (wds_path[0])
        return true;
    snprintf(wds_path, sizeof wds_path, "/tmp/sluice-bench-wds-XXXXXX");
    int fd = mkstemp(wds_path);
    if (fd < 0)
        return false;
    close(fd);
    atexit(remove_wds);
    char cmd[8192];
    if (strchr(dir, '\'') || strchr(wds_path, '\''))
        return false;
    snprintf(cmd, sizeof cmd, "tar -C '%s' -cf '%s' .", dir, wds_path);
    return system(cmd) == 0;
}

/* readers.numpy's case: 32 uint8 256x256x3 arrays in C order (what np.save writes, format
 * 1.0), written once to a temporary folder (removed at exit). Returns its path or NULL. */
static char npy_dir[64];
enum { NPY_FILES = 32, NPY_SIDE = 256 };
static void remove_npy_dir(void)
{
    char path[128];
    for (int k = 0; k < NPY_FILES; k++) {
        snprintf(path, sizeof path, "%s/a_%02d.npy", npy_dir, k);
        unlink(path);
    }
    rmdir(npy_dir);
}

static const char *npy_root(void)
{
    if (npy_dir[0])
        return npy_dir;
    snprintf(npy_dir, sizeof npy_dir, "/tmp/sluice-bench-npy-XXXXXX");
    if (!mkdtemp(npy_dir))
        return NULL;
    atexit(remove_npy_dir);
    char head[128] = "\x93NUMPY\x01\x00";
    int n = snprintf(head + 10, sizeof head - 10,
                     "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d, 3), }",
                     NPY_SIDE, NPY_SIDE);
    memset(head + 10 + n, ' ', 128 - 10 - (size_t)n);
    head[127] = '\n';
    head[8] = 118, head[9] = 0; /* header length 128 - 10 */
    static uint8_t data[NPY_SIDE * NPY_SIDE * 3];
    for (size_t k = 0; k < sizeof data; k++)
        data[k] = (uint8_t)(k * 31 + k / 997);
    for (int k = 0; k < NPY_FILES; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/a_%02d.npy", npy_dir, k);
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(head, 1, sizeof head, f) == sizeof head &&
                  fwrite(data, 1, sizeof data, f) == sizeof data;
        if (f && fclose(f) != 0)
            ok = false;
        if (!ok)
            return NULL;
    }
    return npy_dir;
}

/* readers.mxnet's case: every *.jpg one folder below DIR as a RecordIO record (IRHeader flag 0,
 * label k % 10, then the file's bytes), in one .rec with its .idx, written once to temporary
 * files (removed at exit). Returns the .rec's path (the .idx is rec_idx) or NULL. */
static char rec_file[64], rec_idx[64];
static void remove_rec(void)
{
    unlink(rec_file);
    unlink(rec_idx);
}

static bool rec_put(FILE *rec, FILE *idx, int k, const char *path)
{
    FILE *f = fopen(path, "rb");
    static uint8_t data[1 << 22];
    size_t n = f ? fread(data, 1, sizeof data, f) : 0;
    if (f)
        fclose(f);
    if (!n || n == sizeof data)
        return true; /* unreadable or too large for the case: left out */
    float label = (float)(k % 10);
    uint32_t head[2] = {0xced7230au, (uint32_t)(24 + n)}, ir[6] = {0};
    memcpy(&ir[1], &label, 4);
    fprintf(idx, "%d\t%ld\n", k, ftell(rec));
    static const uint8_t pad[4];
    return fwrite(head, 4, 2, rec) == 2 && fwrite(ir, 4, 6, rec) == 6 &&
           fwrite(data, 1, n, rec) == n && fwrite(pad, 1, (4 - n % 4) % 4, rec) == (4 - n % 4) % 4;
}

static const char *recordio_file(const char *dir)
{
    if (rec_file[0])
        return rec_file;
    snprintf(rec_file, sizeof rec_file, "/tmp/sluice-bench-rec-XXXXXX");
    snprintf(rec_idx, sizeof rec_idx, "/tmp/sluice-bench-idx-XXXXXX");
    int fr = mkstemp(rec_file), fi = mkstemp(rec_idx);
    FILE *rec = fr >= 0 ? fdopen(fr, "wb") : NULL, *idx = fi >= 0 ? fdopen(fi, "w") : NULL;
    DIR *top = opendir(dir);
    atexit(remove_rec);
    bool ok = rec && idx && top;
    int n = 0;
    struct dirent *e;
    while (ok && (e = readdir(top))) {
        char sub[4096], path[8192];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *d = opendir(sub);
        struct dirent *g;
        while (ok && d && (g = readdir(d))) {
            size_t len = strlen(g->d_name);
            if (len < 4 || strcmp(g->d_name + len - 4, ".jpg") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", sub, g->d_name);
            ok = rec_put(rec, idx, n++, path);
        }
        if (d)
            closedir(d);
    }
    if (top)
        closedir(top);
    if (rec && fclose(rec) != 0)
        ok = false;
    if (idx && fclose(idx) != 0)
        ok = false;
    return ok && n ? rec_file : NULL;
}

/* readers.caffe's and readers.caffe2's cases: every *.jpg one folder below DIR as an LMDB
 * entry (key: its number), its value a Datum (data = the file, label k % 10, encoded) or
 * TensorProtos (a STRING tensor holding the file, an INT32 tensor holding k % 10), written once
 * per kind to a temporary database (removed at exit). Returns the database's folder or NULL. */
static char lmdb_dirs[2][64];
static void remove_lmdb(void)
{
    for (int k = 0; k < 2; k++) {
        char p[160];
        if (!lmdb_dirs[k][0])
            continue;
        snprintf(p, sizeof p, "%s/data.mdb", lmdb_dirs[k]);
        unlink(p);
        snprintf(p, sizeof p, "%s/lock.mdb", lmdb_dirs[k]);
        unlink(p);
        rmdir(lmdb_dirs[k]);
    }
}

static size_t pb_varint(uint8_t *b, uint64_t x)
{
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
        x >>= 7;
    } while (x);
    return n;
}

/* field `num` length-delimited: key, length, then (when data) the bytes */
static size_t pb_bytes_head(uint8_t *b, unsigned num, size_t len)
{
    size_t n = pb_varint(b, num << 3 | 2);
    return n + pb_varint(b + n, len);
}

static bool lmdb_put(MDB_txn *txn, MDB_dbi dbi, bool caffe2, int k, const char *path)
{
    static uint8_t data[1 << 22], val[(1 << 22) + 64];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(data, 1, sizeof data, f) : 0, v = 0;
    if (f)
        fclose(f);
    if (!n || n == sizeof data)
        return true; /* unreadable or too large for the case: left out */
    if (!caffe2) {
        v += pb_bytes_head(val + v, 4, n);
        memcpy(val + v, data, n);
        v += n;
        v += pb_varint(val + v, 5 << 3);
        v += pb_varint(val + v, (uint64_t)(k % 10));
        v += pb_varint(val + v, 7 << 3);
        v += pb_varint(val + v, 1);
    } else {
        uint8_t img[16], lab[16];
        size_t ih = pb_varint(img, 2 << 3);
        ih += pb_varint(img + ih, 4); /* data_type STRING */
        ih += pb_bytes_head(img + ih, 6, n);
        v += pb_bytes_head(val + v, 1, ih + n);
        memcpy(val + v, img, ih);
        v += ih;
        memcpy(val + v, data, n);
        v += n;
        size_t lh = pb_varint(lab, 2 << 3);
        lh += pb_varint(lab + lh, 2); /* data_type INT32 */
        lh += pb_varint(lab + lh, 4 << 3);
        lh += pb_varint(lab + lh, (uint64_t)(k % 10));
        v += pb_bytes_head(val + v, 1, lh);
        memcpy(val + v, lab, lh);
        v += lh;
    }
    char key[16];
    snprintf(key, sizeof key, "%08d", k);
    MDB_val mk = {.mv_size = strlen(key), .mv_data = key}, mv = {.mv_size = v, .mv_data = val};
    return mdb_put(txn, dbi, &mk, &mv, 0) == 0;
}

static const char *lmdb_db(const char *dir, bool caffe2)
{
    char *out = lmdb_dirs[caffe2];
    if (out[0])
        return out;
    snprintf(out, 64, "/tmp/sluice-bench-lmdb-XXXXXX");
    if (!mkdtemp(out)) {
        out[0] = '\0';
        return NULL;
    }
    atexit(remove_lmdb);
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    bool ok = mdb_env_create(&env) == 0 && mdb_env_set_mapsize(env, (size_t)1 << 32) == 0 &&
              mdb_env_open(env, out, 0, 0600) == 0 && mdb_txn_begin(env, NULL, 0, &txn) == 0 &&
              mdb_dbi_open(txn, NULL, 0, &dbi) == 0;
    DIR *top = ok ? opendir(dir) : NULL;
    ok = ok && top;
    int n = 0;
    struct dirent *e;
    while (ok && (e = readdir(top))) {
        char sub[4096], path[8192];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *d = opendir(sub);
        struct dirent *g;
        while (ok && d && (g = readdir(d))) {
            size_t len = strlen(g->d_name);
            if (len < 4 || strcmp(g->d_name + len - 4, ".jpg") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", sub, g->d_name);
            ok = lmdb_put(txn, dbi, caffe2, n++, path);
        }
        if (d)
            closedir(d);
    }
    if (top)
        closedir(top);
    if (txn && ok)
        ok = mdb_txn_commit(txn) == 0;
    else if (txn)
        mdb_txn_abort(txn);
    if (env)
        mdb_env_close(env);
    return ok && n ? out : NULL;
}

static sl_status make_graph(const bench_case *c, const options *o, sl_graph **out)
{
    sl_graph *g = NULL;
    sl_status st = sl_graph_create(&g);
    bool fed = c->in != IN_NONE && c->in != IN_FILES;
    if (st == SL_OK && fed && strcmp(c->op, "external_source") != 0)
        st = sl_graph_add(g, "external_source", "in", NULL);
    if (st == SL_OK)
        st = sl_graph_add(g, c->op, "op", NULL);
    static const char *const u8_boxes_inputs[] = {"in", "boxes", "labels"};
    static const char *const select_inputs[] = {"ids", "polys", "in"};
    for (int k = 0; st == SL_OK && k < c->nin; k++)
        st = sl_graph_input(g, "op",
                            c->in == IN_BOXES_LABELS && k == 1 ? "labels"
                            : c->in == IN_U8_BOXES         ? u8_boxes_inputs[k]
                            : c->in == IN_MASK_SELECT      ? select_inputs[k]
                                                           : "in");
    if (st == SL_OK && c->in == IN_MASK_SELECT) {
        st = sl_graph_add(g, "constant", "ids", NULL);
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "ids", "idata", "[1]");
        if (st == SL_OK)
            st = sl_graph_add(g, "constant", "polys", NULL);
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "polys", "idata", "[0,0,1,1,1,2]");
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "polys", "shape", "[2,3]");
    }
    if (st == SL_OK && (c->in == IN_BOXES_LABELS || c->in == IN_U8_BOXES)) {
        st = sl_graph_add(g, "constant", "labels", NULL);
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "labels", "idata", "[1]");
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "labels", "shape", c->in == IN_U8_BOXES ? "[1]" : "[256]");
    }
    if (st == SL_OK && c->in == IN_U8_BOXES) {
        st = sl_graph_add(g, "constant", "boxes", NULL);
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "boxes", "fdata", "[0.2,0.25,0.6,0.7]");
        if (st == SL_OK)
            st = sl_graph_arg_json(g, "boxes", "shape", "[1,4]");
    }
    bool npy = strcmp(c->op, "readers.numpy") == 0, mx = strcmp(c->op, "readers.mxnet") == 0;
    bool caffe = strcmp(c->op, "readers.caffe") == 0, caffe2 = strcmp(c->op, "readers.caffe2") == 0;
    if (st == SL_OK && (caffe || caffe2)) {
        const char *db = lmdb_db(o->data, caffe2);
        st = db ? sl_graph_arg_str(g, "op", "path", db) : SL_EIO;
    } else if (st == SL_OK && mx) {
        const char *rec = recordio_file(o->data);
        st = rec ? sl_graph_arg_str(g, "op", "path", rec) : SL_EIO;
        if (st == SL_OK)
            st = sl_graph_arg_str(g, "op", "index_path", rec_idx);
    } else if (st == SL_OK && c->in == IN_FILES && npy) {
        const char *root = npy_root();
        st = root ? sl_graph_arg_str(g, "op", "file_root", root) : SL_EIO;
    } else if (st == SL_OK && c->in == IN_FILES)
        st = sl_graph_arg_str(g, "op", "file_root", o->data);
    if (st == SL_OK && strcmp(c->op, "readers.coco") == 0) {
        const char *ann = coco_annotations(o->data);
        st = ann ? sl_graph_arg_str(g, "op", "annotations_file", ann) : SL_EIO;
    }
    if (st == SL_OK && strcmp(c->op, "readers.webdataset") == 0)
        st = wds_file(o->data) ? sl_graph_arg_str(g, "op", "paths", wds_path) : SL_EIO;
    if (st == SL_OK && strcmp(c->op, "readers.tfrecord") == 0) {
        st = tfrecord_file(o->data) ? sl_graph_arg_str(g, "op", "path", tfr_path) : SL_EIO;
        if (st == SL_OK)
            st = sl_graph_arg_str(g, "op", "index_path", tfr_index);
    }
    if (st == SL_OK)
        st = set_args(g, c->args);
    if (st == SL_OK)
        st = sl_graph_output(g, "op");
    if (st != SL_OK) {
        sl_graph_destroy(g);
        return st;
    }
    *out = g;
    return SL_OK;
}

/* One iteration: feed (when the case has a fed input), run, count the output pixels. */
static sl_status step(sl_pipeline *p, const char *feed_name, const feed_set *fs, double *out_px)
{
    sl_status st = fs ? sl_pipeline_feed_input(p, feed_name, &fs->feed) : SL_OK;
    if (st == SL_OK)
        st = sl_pipeline_run(p);
    if (st == SL_OK && out_px)
        *out_px += batch_pixels(sl_pipeline_output(p, 0));
    return st;
}

static int node_index(const sl_pipeline *p, const char *name)
{
    sl_node_stats s;
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++)
        if (sl_pipeline_node_stats(p, i, &s) == SL_OK && strcmp(s.name, name) == 0)
            return i;
    return -1;
}

#define MAX_RUNS 64

/* CPU seconds used so far by the whole machine (non-idle time of /proc/stat, steal included)
 * and by this process; their difference over a window is what others took. */
static double machine_cpu_s(void)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                       &v[4], &v[5], &v[6], &v[7])
              : 0;
    if (f)
        fclose(f);
    if (n < 8)
        return 0.0; /* unknown: never counts as noisy */
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* One measured window: iterations until the op's busy time reaches min-ms (at least 2, at
 * most 4 x min-ms of wall time). background: share of the machine's CPUs that other
 * processes used meanwhile. */
typedef struct window {
    int64_t iters;
    double busy_s, span_s, wall_s, out_px, background;
} window;

static sl_status measure(sl_pipeline *p, int node, const char *feed_name, const feed_set *fs,
                         const options *o, window *w)
{
    sl_node_stats s0, s1;
    sl_status st;
    double t0 = now_s(), m0 = machine_cpu_s(), c0 = self_cpu_s(), t1;
    *w = (window){0};
    sl_pipeline_node_stats(p, node, &s0);
    do {
        st = step(p, feed_name, fs, &w->out_px);
        w->iters++;
        sl_pipeline_node_stats(p, node, &s1);
        t1 = now_s();
    } while (st == SL_OK && (w->iters < 2 || (s1.busy_ms - s0.busy_ms < o->min_ms &&
                                              (t1 - t0) * 1e3 < 4.0 * o->min_ms)));
    double others = (machine_cpu_s() - m0) - (self_cpu_s() - c0);
    w->background = others > 0.0 ? others / ((t1 - t0) * (double)o->ncpu) : 0.0;
    w->busy_s = (s1.busy_ms - s0.busy_ms) / 1e3;
    w->span_s = (s1.total_ms - s0.total_ms) / 1e3;
    w->wall_s = t1 - t0;
    return st;
}

/* Builds the case's pipeline on `threads` threads and measures it into *r: `runs` windows,
 * each measured again (up to `retries` times) while others use more than max-background of
 * the machine; the medians are reported. */
static int bench_one(const bench_case *c, int threads, const options *o,
                     const feed_set sets[IN_KINDS], result *r)
{
    sl_graph *g = NULL;
    sl_pipeline *p = NULL;
    sl_pipeline_options po;
    sl_pipeline_options_init(&po);
    po.batch_size = o->batch;
    po.num_threads = threads;
    po.prefetch_queue_depth = 1;
    po.seed = 42;
    const feed_set *fs = c->in >= IN_ENCODED ? &sets[c->in] : NULL;
    const char *feed_name = strcmp(c->op, "external_source") == 0 ? "op" : "in";
    bool per_input = fs && c->in != IN_INT; /* else megapixels are the output's */
    double mp[MAX_RUNS], omp[MAX_RUNS], img_t[MAX_RUNS], op_img[MAX_RUNS], pipe_img[MAX_RUNS];
    double bg[MAX_RUNS], out_px = 0.0, imgs_total = 0.0;
    int node = -1;
    sl_status st = make_graph(c, o, &g);
    if (st != SL_OK || (st = sl_pipeline_create(g, &po, &p)) != SL_OK) {
        snprintf(r->error, sizeof r->error, "%s", sl_last_error());
        goto fail;
    }
    st = sl_pipeline_build(p);
    for (int w = 0; st == SL_OK && w < 3; w++)
        st = step(p, feed_name, fs, NULL);
    if (st == SL_OK && (node = node_index(p, "op")) < 0)
        st = SL_EINTERNAL;
    for (int run = 0; st == SL_OK && run < o->runs; run++) {
        window w;
        for (int k = 0; (st = measure(p, node, feed_name, fs, o, &w)) == SL_OK; k++) {
            if (w.background <= o->max_background)
                break;
            if (k == o->retries) {
                r->noisy++;
                break;
            }
            r->retried++;
        }
        double imgs = (double)(w.iters * o->batch);
        double in_px = per_input ? fs->pixels * (double)w.iters : w.out_px;
        mp[run] = in_px / 1e6 / w.busy_s;
        omp[run] = w.out_px / 1e6 / w.busy_s;
        img_t[run] = imgs / w.busy_s;
        op_img[run] = imgs / w.span_s;
        pipe_img[run] = imgs / w.wall_s;
        bg[run] = w.background;
        out_px += w.out_px;
        imgs_total += imgs;
    }
    if (st != SL_OK) {
        snprintf(r->error, sizeof r->error, "%s", p ? sl_pipeline_error(p) : sl_last_error());
        goto fail;
    }
    r->out_mp = out_px / imgs_total / 1e6;
    r->in_mp = per_input ? fs->pixels / o->batch / 1e6 : r->out_mp;
    r->mp_s = median(mp, o->runs);
    r->out_mp_s = median(omp, o->runs);
    r->img_s_t = median(img_t, o->runs);
    r->op_img_s = median(op_img, o->runs);
    r->pipe_img_s = median(pipe_img, o->runs);
    r->background = median(bg, o->runs);
fail:
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    return st == SL_OK ? 0 : -1;
}

/* ---- output ---------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, len, "%s", colon + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

static int write_json(const options *o, const int *sel, int nsel, result (*res)[8],
                      const feed_set *u8)
{
    FILE *f = fopen(o->json, "w");
    if (!f)
        return perror(o->json), -1;
    char cpu[256], date[64];
    time_t t = time(NULL);
    cpu_model(cpu, sizeof cpu);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fprintf(f, "{\"bench\": \"bench_ops\", \"date\": \"%s\", \"commit\": ", date);
    json_str(f, o->commit ? o->commit : "");
    fprintf(f, ", \"cpu\": ");
    json_str(f, cpu);
    fprintf(f, ", \"online_cpus\": %ld, \"data\": ", sysconf(_SC_NPROCESSORS_ONLN));
    json_str(f, o->data);
    fprintf(f,
            ", \"batch\": %d, \"mean_input_mp\": %.4f, \"runs\": %d, \"min_ms\": %g, "
            "\"retries\": %d, \"max_background\": %g,\n"
            " \"units\": {\"mp_s_per_thread\": \"input megapixels (H x W) per busy "
            "thread-second\", \"op_img_s\": \"images per second of node span\"},\n"
            " \"results\": [",
            o->batch, u8->pixels / o->batch / 1e6, o->runs, o->min_ms, o->retries,
            o->max_background);
    for (int k = 0; k < nsel; k++) {
        const bench_case *c = &cases[sel[k]];
        for (int j = 0; j < o->nthreads; j++) {
            const result *r = &res[k][j];
            fprintf(f, "%s\n  {\"op\": ", k || j ? "," : "");
            json_str(f, c->op);
            fprintf(f, ", \"config\": ");
            json_str(f, c->config);
            fprintf(f, ", \"input\": \"%s\", \"args\": ", in_names[c->in]);
            json_str(f, c->args);
            fprintf(f, ", \"threads\": %d", o->threads[j]);
            if (r->error[0]) {
                fprintf(f, ", \"error\": ");
                json_str(f, r->error);
            } else {
                fprintf(f,
                        ", \"in_mp_per_img\": %.5f, \"out_mp_per_img\": %.5f, "
                        "\"mp_s_per_thread\": %.2f, \"out_mp_s_per_thread\": %.2f, "
                        "\"img_s_per_thread\": %.1f, \"op_img_s\": %.1f, \"pipeline_img_s\": %.1f, "
                        "\"background\": %.3f, \"windows_retried\": %d, \"windows_noisy\": %d",
                        r->in_mp, r->out_mp, r->mp_s, r->out_mp_s, r->img_s_t, r->op_img_s,
                        r->pipe_img_s, r->background, r->retried, r->noisy);
            }
            fputc('}', f);
        }
    }
    fprintf(f, "\n]}\n");
    return fclose(f) ? (perror(o->json), -1) : 0;
}

/* One row per case: op, config, in -> out MP per image, then per thread count the MP/s per
 * thread and the op's img/s. `md` selects a Markdown table. */
static void print_row(FILE *f, bool md, const bench_case *c, const result *res, const options *o)
{
    char mp[32];
    snprintf(mp, sizeof mp, "%.3f -> %.3f", res[0].in_mp, res[0].out_mp);
    fprintf(f, md ? "| %s | %s | %s |" : "%-26s %-34s %-15s", c->op, c->config,
            res[0].error[0] ? "-" : mp);
    for (int j = 0; j < o->nthreads; j++) {
        if (res[j].error[0])
            fprintf(f, md ? " %s | %s |" : " %10s %15s", "error", "error");
        else if (res[j].in_mp < 1e-3) /* scalars: megapixels mean nothing */
            fprintf(f, md ? " %s | %.0f |" : " %10s %15.0f", "-", res[j].op_img_s);
        else
            fprintf(f, md ? " %.1f | %.0f |" : " %10.1f %15.0f", res[j].mp_s, res[j].op_img_s);
    }
    bool noisy = false; /* the median itself may be a noisy window */
    for (int j = 0; j < o->nthreads; j++)
        noisy = noisy || 2 * res[j].noisy >= o->runs;
    fprintf(f, "%s\n", noisy ? (md ? " noisy |" : "  noisy") : (md ? " |" : ""));
}

static void print_header(FILE *f, bool md, const options *o)
{
    fprintf(f, md ? "| op | config | MP/img in -> out |" : "%-26s %-34s %-15s", "op", "config",
            "MP/img in->out");
    for (int j = 0; j < o->nthreads; j++) {
        if (md)
            fprintf(f, " %dT MP/s/thread | %dT img/s |", o->threads[j], o->threads[j]);
        else
            fprintf(f, " %4dT:MP/s %7dT:img/s", o->threads[j], o->threads[j]);
    }
    fprintf(f, md ? " note |\n|---|---|---|" : "\n");
    for (int j = 0; md && j < o->nthreads; j++)
        fprintf(f, "---:|---:|");
    fprintf(f, md ? "---|\n" : "");
}

/* ---- main ------------------------------------------------------------------------------ */

static int check_coverage(bool quiet)
{
    int missing = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        bool found = false;
        for (int k = 0; k < NUM_CASES && !found; k++)
            found = strcmp(cases[k].op, op->name) == 0;
        /* an operator that runs the application's function (python_function) measures that
         * function, not sluice: there is nothing of ours to benchmark; a merge reads the two
         * branches of a split, which a one-node case cannot give it (bench/specs/cond_*.json
         * measure whole conditionals, docs/performance.md) */
        if (!found && (op->devices & SL_OP_CPU) && !(op->flags & SL_OP_CALLBACK) &&
            strcmp(op->name, "_conditional.merge") != 0) {
            fprintf(stderr, "bench_ops: no micro-benchmark for operator %s\n", op->name);
            missing++;
        }
    }
    if (!quiet)
        printf("bench_ops: %d cases, %d CPU operators without one\n", NUM_CASES, missing);
    return missing;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_ops --data DIR [--threads 1,2] [--runs 5] [--min-ms 200]\n"
                    "                 [--retries 3] [--max-background 0.25] [--batch 64]\n"
                    "                 [--filter TEXT] [--json PATH] [--md PATH] [--commit REV]\n"
                    "       bench_ops --list | --check-coverage\n");
    return 2;
}

static int parse_threads(options *o, const char *s)
{
    o->nthreads = 0;
    for (const char *q = s; *q && o->nthreads < 8; q += strspn(q, ",")) {
        char *end;
        long v = strtol(q, &end, 10);
        if (end == q || v < 1 || v > 1024)
            return -1;
        o->threads[o->nthreads++] = (int)v;
        q = end;
    }
    return o->nthreads ? 0 : -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (options){.runs = 5,
                   .batch = 64,
                   .min_ms = 200.0,
                   .retries = 3,
                   .max_background = 0.25,
                   .ncpu = ncpu > 0 ? (int)ncpu : 1,
                   .nthreads = 1,
                   .threads = {1}};
    if (ncpu > 1)
        o->threads[o->nthreads++] = (int)ncpu;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            for (int k = 0; k < NUM_CASES; k++)
                printf("%-26s %-34s %-8s %s\n", cases[k].op, cases[k].config, in_names[cases[k].in],
                       cases[k].args);
            exit(0);
        } else if (!strcmp(a, "--check-coverage")) {
            exit(check_coverage(false) ? 1 : 0);
        } else if (!v) {
            return -1;
        } else if (!strcmp(a, "--data")) {
            o->data = v;
        } else if (!strcmp(a, "--filter")) {
            o->filter = v;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else if (!strcmp(a, "--md")) {
            o->md = v;
        } else if (!strcmp(a, "--commit")) {
            o->commit = v;
        } else if (!strcmp(a, "--threads")) {
            if (parse_threads(o, v))
                return -1;
        } else if (!strcmp(a, "--runs")) {
            o->runs = atoi(v);
        } else if (!strcmp(a, "--batch")) {
            o->batch = atoi(v);
        } else if (!strcmp(a, "--min-ms")) {
            o->min_ms = atof(v);
        } else if (!strcmp(a, "--retries")) {
            o->retries = atoi(v);
        } else if (!strcmp(a, "--max-background")) {
            o->max_background = atof(v);
        } else {
            return -1;
        }
        i++;
    }
    bool ok = o->data && o->runs >= 1 && o->runs <= MAX_RUNS && o->batch >= 1 && o->min_ms > 0 &&
              o->retries >= 0;
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o))
        return usage();
    check_coverage(true);
    int sel[NUM_CASES], nsel = 0, failed = 0;
    for (int k = 0; k < NUM_CASES; k++)
        if (!o.filter || strstr(cases[k].op, o.filter) || strstr(cases[k].config, o.filter))
            sel[nsel++] = k;
    feed_set sets[IN_KINDS] = {0};
    result(*res)[8] = calloc((size_t)nsel + 1, sizeof *res);
    if (!res || load_inputs(&o, sets))
        return 1;
    printf("bench_ops: %d images from %s, mean %.3f MP; median of %d windows of >= %g ms busy\n",
           o.batch, o.data, sets[IN_U8].pixels / o.batch / 1e6, o.runs, o.min_ms);
    printf("MP/s = input megapixels per busy thread-second; img/s = op throughput on T threads\n");
    print_header(stdout, false, &o);
    for (int k = 0; k < nsel; k++) {
        for (int j = 0; j < o.nthreads; j++) {
            if (bench_one(&cases[sel[k]], o.threads[j], &o, sets, &res[k][j]) == 0)
                continue;
            fprintf(stderr, "bench_ops: %s (%s), %d threads: %s\n", cases[sel[k]].op,
                    cases[sel[k]].config, o.threads[j], res[k][j].error);
            failed = 1;
        }
        print_row(stdout, false, &cases[sel[k]], res[k], &o);
        fflush(stdout);
    }
    if (o.json && write_json(&o, sel, nsel, res, &sets[IN_U8]))
        failed = 1;
    FILE *md = o.md ? fopen(o.md, "w") : NULL;
    if (md) {
        print_header(md, true, &o);
        for (int k = 0; k < nsel; k++)
            print_row(md, true, &cases[sel[k]], res[k], &o);
        fclose(md);
    } else if (o.md) {
        perror(o.md);
        failed = 1;
    }
    for (int i = 0; i < IN_KINDS; i++)
        if (i != IN_BOXES_LABELS && i != IN_U8_BOXES && i != IN_MASK_SELECT) /* shared data */
            feed_free(&sets[i]);
    free(res);
    return failed;
}
