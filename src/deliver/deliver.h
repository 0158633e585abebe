/*
 * deliver/: where results go once the gate has decided: GitHub (the sticky PR
 * comment, check runs), the Actions runtime files (outputs, step summary,
 * annotations, the event JSON), and W&B (publishing a summary back to a run).
 * Decides nothing: it sends what the gate and the reporters produced.
 */
#ifndef PG_DELIVER_H
#define PG_DELIVER_H

#include "../util/util.h"

#include <stdint.h>

/* ---- GitHub and the Actions runtime (github.c, actions.c) ---- */

/* ---- end of GitHub and the Actions runtime ---- */

/*
 * (kept apart so that the two halves can grow independently)
 */

/* ---- W&B publish (wandb.c) ---- */

/* ---- end of W&B publish ---- */

#endif
