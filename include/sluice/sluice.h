/* sluice/sluice.h: the umbrella header. */
#ifndef SLUICE_H
#define SLUICE_H

#include "sluice/status.h"
#include "sluice/dtype.h"
#include "sluice/batch.h"
#include "sluice/op.h"
#include "sluice/rng.h"
#include "sluice/registry.h"
#include "sluice/graph.h"
#include "sluice/pipeline.h"
#include "sluice/distributed.h"
#include "sluice/index.h"

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif
/* "0.1.0" */
SL_API const char *sl_version(void);
#ifdef __cplusplus
}
#endif
#endif
