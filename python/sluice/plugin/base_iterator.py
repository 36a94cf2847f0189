"""sluice.plugin.base_iterator: LastBatchPolicy and the epoch accounting shared by the framework
iterators (DALI's nvidia.dali.plugin.base_iterator), with no framework import.

An iterator drives one or more pipelines in lock step (one per shard or device) and decides from
counters alone where an epoch ends, how many samples of the last batch belong to it and where
the next epoch starts. Readers never stop by themselves: readers.file streams sample after
sample across epochs (with ``pad_last_batch`` it repeats a shard's last sample up to whole
batches), so the counters follow what the readers really read:

- ``reader_name``: from the reader's metadata (epoch_size, number_of_shards, shard_id,
  pad_last_batch, stick_to_shard). For every shard *slot* (the reader that started on shard g;
  it reads shard (g + epoch) mod S unless stick_to_shard) the iterator keeps how many samples of
  its next shard it already read at the end of an epoch (``_ahead``), so that with FILL and no
  padding each epoch still covers every shard. Slots of other ranks are modelled too, so every
  rank computes the same epoch lengths.
- ``size``: the samples per epoch (summed over the pipelines) and whether the reader pads
  (``last_batch_padded``), DALI's legacy mode.
- neither (size -1): one pipeline runs until it raises StopIteration (an external_source that
  ends its epoch); the policy is then FILL.

The results are DALI's (the arithmetic is re-derived, not copied): the same steps per epoch,
the same samples kept in a PARTIAL batch, the same start of the next epoch. One internal
difference: with FILL, no padding and three or more shards, DALI pairs slot g with the size of
shard g - epoch while the slot reads shard g + epoch; sluice uses the shard the slot reads.
The epoch lengths come out the same (checked for up to 6 shards). len() differs from DALI's
only in the legacy `size` mode, see __len__.

Invariant: the iterator holds no output of the pipelines between calls (except the first batch
that prepare_first_batch buffers), so the batches the user keeps are the only ones pinning
iteration buffers (see docs/python.md: how many steps may be held).
"""
import enum
import logging
import traceback
import warnings


_log = logging.getLogger("sluice.plugin")


@enum.unique
class LastBatchPolicy(enum.Enum):
    """What the iterator does with the last batch of an epoch when the epoch's samples do not
    fill it (data set [1..7], batch 2, see the iterators' docs):

    * FILL: the batch is full, filled by wrapping into the next epoch ([7, 1]) or, with the
      reader's ``pad_last_batch``, by repeating the last sample ([7, 7]).
    * DROP: the batch is not returned; the epoch ends with the last full batch.
    * PARTIAL: only the epoch's samples are returned ([7]): the tensors are shorter.
    """

    FILL = 0
    DROP = 1
    PARTIAL = 2


class IteratorArgumentError(AssertionError, ValueError):
    """Bad or contradictory iterator arguments. DALI raises AssertionError with the same
    message; this class is also a ValueError."""


def _auto_reset_mode(auto_reset):
    if auto_reset is False or auto_reset is None or auto_reset == "no":
        return False
    if auto_reset is True or auto_reset == "yes":
        return True
    raise ValueError(f"Unsupported value for `auto_reset` {auto_reset}")


def _ceil_to(n, k):
    """n rounded up to a multiple of k (k > 0; n may be negative)."""
    return -(-n // k) * k


class _SluiceBaseIterator:
    """Base of the framework iterators; not for direct use. Subclasses implement __next__ with
    _next_batches(), giving _convert (outputs of one pipeline -> a dict) and _narrow (the first
    n samples of a converted batch, without a copy)."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        if pipelines is None:
            raise IteratorArgumentError("Number of provided pipelines has to be at least 1")
        pipes = list(pipelines) if isinstance(pipelines, (list, tuple)) else [pipelines]
        if not pipes:
            raise IteratorArgumentError("Number of provided pipelines has to be at least 1")
        self._pipes = pipes
        self._num_gpus = len(pipes)
        # frameworks expect data iterators to have a `batch_size` attribute
        self.batch_size = pipes[0].max_batch_size
        if any(p.max_batch_size != self.batch_size for p in pipes):
            raise IteratorArgumentError("All pipelines should have the same batch size set")
        self._size = int(size)
        self._auto_reset = _auto_reset_mode(auto_reset)
        self._prepare_first_batch = bool(prepare_first_batch)

        if fill_last_batch is not None:
            warnings.warn("Please do not use `fill_last_batch` and use `last_batch_policy` "
                          "instead.", FutureWarning, stacklevel=3)
            policy = LastBatchPolicy.FILL if fill_last_batch else LastBatchPolicy.PARTIAL
        else:
            if type(last_batch_policy) is not LastBatchPolicy:
                raise ValueError("Wrong type for `last_batch_policy`. "
                                 f"Expected {LastBatchPolicy}, got {type(last_batch_policy)}")
            policy = last_batch_policy
        self._last_batch_policy = policy
        self._last_batch_padded = bool(last_batch_padded)

        if self._size == 0:
            raise IteratorArgumentError("Size cannot be 0")
        if self._size < 0 and not (len(pipes) == 1 or reader_name):
            raise IteratorArgumentError("Negative size is supported only for a single pipeline")
        if reader_name and self._size >= 0:
            raise IteratorArgumentError("When reader_name is provided, size should not be set")
        if reader_name and last_batch_padded:
            raise IteratorArgumentError(
                "When reader_name is provided, last_batch_padded should not be set")
        if self._size < 0 and not reader_name:
            # runs until the pipeline raises StopIteration: nothing to fill, drop or cut
            self._last_batch_policy = LastBatchPolicy.FILL
            self._last_batch_padded = False
        if self._size > 0 and not reader_name:
            warnings.warn("Please set `reader_name` and don't set last_batch_padded and size "
                          "manually whenever possible: with shards or padding this may miss "
                          "samples or return duplicated ones.", Warning, stacklevel=3)

        self._counter = 0           # samples returned per pipeline (reader) or in all (size)
        self._epoch_start = 0       # _counter when this epoch began (what it took in advance)
        for p in pipes:
            p.build()
        self._reader_name = reader_name
        self._read_reader_meta()
        self._initial_ckpts = None  # checkpoints before the first batch was prepared
        saved = pipes[0]._restored_iterator()  # restored pipelines: where the iterator was
        for p in pipes[1:]:
            p._restored_iterator()
        if saved is not None:
            self._set_iterator_state(saved)
        self._ever_scheduled = False
        self._ever_consumed = False
        self._steps_since_reset = 0
        self._pending = []          # outputs taken from the first pipelines of a step that failed
        self._unscheduled = [0] * len(pipes)  # iterations a failed schedule_run left out
        self._deferred = None       # an error of schedule_run, raised by the next step

    # ---- reader metadata ---------------------------------------------------------------------
    def _read_reader_meta(self):
        if not self._reader_name:
            return
        metas = [p.reader_meta(self._reader_name) for p in self._pipes]

        def same(key, what):
            if any(m[key] != metas[0][key] for m in metas):
                raise IteratorArgumentError(
                    f"Reader Operator should have the same {what} in all the pipelines.")
            return metas[0][key]

        n = int(same("epoch_size", "size value"))
        s = int(same("number_of_shards", "`num_shards` argument set"))
        self._size_no_pad, self._shards_num = n, s
        self._last_batch_padded = bool(same("pad_last_batch", "`pad_last_batch` argument set"))
        self._is_stick_to_shard = bool(same("stick_to_shard", "`stick_to_shard` argument set"))
        self._shards_id = [int(m["shard_id"]) for m in metas]
        bs = self.batch_size
        if self._last_batch_policy == LastBatchPolicy.DROP:
            self._size = n // s
        elif self._last_batch_padded:
            self._size = int(metas[0]["epoch_size_padded"]) // s  # every shard padded alike
        else:
            self._size = _ceil_to(-(-n // s), bs)  # the biggest shard, in whole batches
        # shard g of S covers [floor(N g / S), floor(N (g + 1) / S)), as readers.file cuts it
        self._shard_sizes = [n * (g + 1) // s - n * g // s for g in range(s)]
        self._rotation = 0                       # shards each slot moved on (FILL accounting)
        self._slot_sizes = list(self._shard_sizes)
        self._ahead = [0] * s

    def _slot_sizes_now(self):
        s = self._shards_num
        if self._is_stick_to_shard:
            return list(self._shard_sizes)
        return [self._shard_sizes[(g + self._rotation) % s] for g in range(s)]

    # ---- stepping ----------------------------------------------------------------------------
    def _schedule_runs(self, release_outputs=True):
        """Releases the step just taken and schedules one more iteration per pipeline. An
        exception of an external_source's callback (raised while feeding) leaves that
        pipeline one iteration short; _catch_up schedules it at the next step."""
        self._ever_scheduled = True
        error = None
        for k, p in enumerate(self._pipes):
            if release_outputs:
                p.release_outputs()
            try:
                p.schedule_run()
            except Exception as e:  # noqa: BLE001 - re-raised below, after the other pipes
                self._unscheduled[k] += 1
                error = error or e
        if error is not None:
            raise error

    def _schedule_or_defer(self):
        """_schedule_runs(); its error is kept for the next step, since this step's batch is
        good. (A helper of its own: the error's traceback must not reach a frame that holds
        the batch's tensors, or they would stay pinned as long as the error lives.)"""
        try:
            self._schedule_runs()
        except Exception as e:  # noqa: BLE001 - raised by the next step
            self._deferred = e

    def _catch_up(self):
        for k, p in enumerate(self._pipes):
            while self._unscheduled[k]:
                p.schedule_run()
                self._unscheduled[k] -= 1

    def _end_iteration(self):
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def _get_outputs(self):
        """The next iteration's outputs of every pipeline (a list of tuples of TensorListCPU),
        or StopIteration at the end of the epoch."""
        if not self._ever_scheduled:
            self._schedule_runs(release_outputs=False)
        self._catch_up()
        if self._size > 0 and self._counter >= self._size:
            self._end_iteration()
        outs, self._pending = self._pending, []
        ended = False
        try:
            while len(outs) < self._num_gpus:
                outs.append(self._pipes[len(outs)].share_outputs())
        except StopIteration:
            for p in self._pipes[:len(outs)]:
                p.release_outputs()
            outs.clear()
            ended = True  # reset() runs outside this handler: an error it defers must not
            #               carry this StopIteration as its context
        except Exception as e:  # noqa: BLE001 - re-raised; a step's error carries .iteration
            # SluiceError, or the exception of a parallel external_source's batch (any type,
            # with .iteration set: that step is consumed)
            if getattr(e, "iteration", None) is None:
                # nothing was consumed (e.g. too many earlier batches still referenced): keep
                # what the first pipelines gave, the next call goes on from the failed one
                self._pending = outs
                raise
            self._skip_failed_step(len(outs))
            outs.clear()  # the error's traceback must not pin the other pipelines' buffers
            raise
        if ended:
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise StopIteration
        if self._reader_name or self._size != -1:
            for p, out in zip(self._pipes, outs):
                for o in out:
                    # on_bad_sample="skip" delivers a batch without its bad samples: smaller
                    if len(o) < self.batch_size and p.bad_samples() > 0:
                        continue
                    if len(o) != self.batch_size:
                        raise AssertionError(
                            "Variable batch size is not supported by the iterator when "
                            "reader_name is provided or iterator size is set explicitly")
        return outs

    def _skip_failed_step(self, failed):
        """Pipeline `failed` delivered the error of this step's iteration (the iteration is
        consumed). Takes and drops the same iteration of the other pipelines so that they stay
        in step, schedules the next ones and counts the step, so the next call goes on with
        the next batch (its samples are lost, as the reader read them)."""
        for k, p in enumerate(self._pipes):
            if k < failed:
                p.release_outputs()
            elif k > failed:
                try:
                    p.share_outputs()
                    p.release_outputs()
                except Exception as e:  # noqa: BLE001 - that step failed there too
                    if getattr(e, "iteration", None) is None:
                        raise
            p.schedule_run()
        self._steps_since_reset += 1
        self._advance_and_check_drop_last(end_iteration=False)

    def _advance_and_check_drop_last(self, dry_run=False, end_iteration=True):
        """Counts one step; with DROP, True when that step's batch overflows the epoch (the
        batch is dropped and, unless dry_run or not end_iteration, StopIteration raised)."""
        counter, should_end = self._counter, False
        drop = self._last_batch_policy == LastBatchPolicy.DROP
        if self._reader_name:
            counter += self.batch_size
            if drop:
                should_end = any(a + counter > sz for a, sz in zip(self._ahead,
                                                                  self._slot_sizes))
        else:
            counter += self._num_gpus * self.batch_size
            should_end = drop and counter > self._size
        if not dry_run:
            self._counter = counter
            if should_end and end_iteration:
                self._end_iteration()
        return should_end

    def _next_batches(self):
        """One step: a list with one converted batch (dict) per pipeline, the last batch of an
        epoch cut to the epoch's samples with PARTIAL."""
        self._ever_consumed = True
        if self._deferred is not None:
            error, self._deferred = self._deferred, None
            # the error's frames (and their callers') would keep the previous step's tensors
            # alive: clear their variables (the traceback stays readable)
            traceback.clear_frames(error.__traceback__)
            try:
                raise error
            finally:
                del error  # no cycle through this frame
        outputs, batches = self._get_outputs(), []
        try:
            for i, outs in enumerate(outputs):
                batches.append(self._convert(i, outs))
        except Exception:
            outputs = outs = None
            batches.clear()
            self._schedule_runs()  # this step is lost, the next one goes on
            self._steps_since_reset += 1
            self._advance_and_check_drop_last(end_iteration=False)
            raise
        outputs = outs = None  # the converted tensors hold the buffers from here on
        self._schedule_or_defer()
        self._steps_since_reset += 1
        self._advance_and_check_drop_last()
        if self._last_batch_policy != LastBatchPolicy.PARTIAL:
            return batches
        bs = self.batch_size
        if self._reader_name:
            # each pipeline keeps what is left of the shard it reads in this epoch
            left = [bs - (self._counter - self._shard_sizes[sid]) for sid in self._shards_id]
            if any(n < bs for n in left):
                return [self._narrow(b, max(0, min(bs, n))) for b, n in zip(batches, left)]
        elif self._size > 0 and self._counter > self._size:
            keep = self._num_gpus * bs - (self._counter - self._size)  # samples in this step
            npipes = -(-keep // bs)
            batches = batches[:npipes]
            batches[-1] = self._narrow(batches[-1], keep % bs or bs)
        return batches

    def _convert(self, index, outputs):
        raise NotImplementedError

    def _narrow(self, batch, n):
        raise NotImplementedError

    # ---- epochs ------------------------------------------------------------------------------
    def reset(self):
        """Starts the next epoch, once this one has ended (StopIteration, or all len() steps
        taken); a reset in the middle of an epoch is ignored with a warning, as in DALI."""
        if self._last_batch_policy == LastBatchPolicy.DROP:
            # after len() steps the reader still has the dropped batch in the pipeline: take it
            should_end = self._advance_and_check_drop_last(dry_run=True, end_iteration=False)
            ended = self._size > 0 and self._counter >= self._size
            if should_end and not ended:
                self._get_outputs()
                self._schedule_runs()
                self._advance_and_check_drop_last(end_iteration=False)
        if not (self._counter >= self._size or self._size < 0):
            _log.warning("sluice iterator: reset() before the end of the epoch is not "
                         "supported; ignored")
            return
        fill_wraps = (self._last_batch_policy == LastBatchPolicy.FILL
                      and not self._last_batch_padded)
        if fill_wraps and self._reader_name:
            self._account_fill_epoch()
        elif fill_wraps:
            self._counter = self._counter % self._size  # samples of this epoch already taken
        else:
            self._counter = 0
        if self._reader_name and not self._is_stick_to_shard:
            self._shards_id = [(sid + 1) % self._shards_num for sid in self._shards_id]
        for k, p in enumerate(self._pipes):
            p.reset()
            if p.empty():
                try:
                    p.schedule_run()
                except Exception as e:  # noqa: BLE001 - raised by the next step
                    # an external_source's error for the new epoch's first batch: the epoch
                    # still starts; the next step raises it and the one after goes on
                    self._unscheduled[k] += 1
                    if self._deferred is None:
                        self._deferred = e
        self._steps_since_reset = 0
        self._epoch_start = self._counter

    def _account_fill_epoch(self):
        """FILL without padding, with a reader: the last batch of each slot ran into its next
        shard. Carries over how far, so that the next epoch ends when every slot has read
        (at least) all of its next shard."""
        bs = self.batch_size
        read = self._counter - min(self._ahead)  # samples each slot read in this epoch
        ahead = [a + read - sz for a, sz in zip(self._ahead, self._slot_sizes)]
        if not self._is_stick_to_shard:
            self._rotation += 1
        self._slot_sizes = self._slot_sizes_now()
        size = _ceil_to(max(sz - a for sz, a in zip(self._slot_sizes, ahead)), bs)
        if size <= 0:
            # every slot already read all of its next shard: that epoch is over, go on to the
            # one after it
            ahead = [0] * self._shards_num
            if not self._is_stick_to_shard:
                self._rotation += 1
            self._slot_sizes = self._slot_sizes_now()
            size = _ceil_to(max(self._slot_sizes), bs)
        self._ahead, self._counter, self._size = ahead, min(ahead), size

    # ---- the iterator protocol ---------------------------------------------------------------
    def next(self):
        """The next batch (as __next__)."""
        return self.__next__()

    def __next__(self):
        raise NotImplementedError

    def __iter__(self):
        # iter() on an iterator that has been used starts its next epoch; not on a fresh one
        # (nothing would be reset) nor right after a reset (it would be ignored with a warning)
        if self._counter != 0 and self._ever_consumed and self._steps_since_reset:
            self.reset()
        return self

    @property
    def size(self):
        """Samples per epoch this iterator counts: per pipeline (reader_name) or in all
        (size); -1 when it runs until the pipeline raises StopIteration."""
        return self._size

    def __len__(self):
        """Steps of the current epoch, all of them (also those already taken). Equal to
        DALI's value, except with `size`, FILL and no padding, where DALI ignores the samples
        the previous epoch's last batch took in advance (and counts one step too many)."""
        if self._size < 0:
            raise TypeError("this iterator has no length: it runs until its pipeline raises "
                            "StopIteration (size=-1 and no reader_name)")
        per_step = self.batch_size if self._reader_name else self._num_gpus * self.batch_size
        todo = self._size - self._epoch_start
        if self._last_batch_policy == LastBatchPolicy.DROP:
            return todo // per_step
        return -(-todo // per_step)

    # ---- checkpoints ---------------------------------------------------------------------------
    # What the iterator adds to each pipeline's checkpoint: its position in the epoch.
    _STATE = ("_counter", "_epoch_start", "_steps_since_reset", "_size", "_shards_id",
              "_rotation", "_slot_sizes", "_ahead")

    def _iterator_state(self):
        return {k: getattr(self, k) for k in self._STATE if hasattr(self, k)}

    def _set_iterator_state(self, state):
        for k, v in state.items():
            if k in self._STATE:
                setattr(self, k, v)

    def _save_initial_checkpoints(self):
        """Before the first batch is prepared (taken from the pipelines, not yet by the user):
        the checkpoints that batch must not count."""
        if all(p.enable_checkpointing for p in self._pipes):
            self._initial_ckpts = self.checkpoints()

    def checkpoints(self):
        """One checkpoint string per pipeline (DALI's checkpoints()): each pipeline's state
        after the batches this iterator returned, with the iterator's own position in the
        epoch. A batch prepared in advance (prepare_first_batch) and not yet returned is not
        counted. Restore with ``Pipeline(..., checkpoint=c)`` for each pipeline and a new
        iterator over them; needs ``enable_checkpointing=True`` on every pipeline."""
        if self._initial_ckpts is not None and getattr(self, "_first_batch", None) is not None:
            return list(self._initial_ckpts)
        state = self._iterator_state()
        return [p._checkpoint(iterator=state) for p in self._pipes]

    def state_dict(self):
        """PyTorch's Stateful protocol: {"checkpoints": checkpoints()}."""
        return {"checkpoints": self.checkpoints()}

    def load_state_dict(self, state_dict):
        """Continues from state_dict() of an iterator over the same pipelines: each pipeline
        is rebuilt from its checkpoint (what was prefetched is dropped) and the next batch is
        the one that iterator would have returned next."""
        ckpts = state_dict["checkpoints"] if isinstance(state_dict, dict) else None
        if not isinstance(ckpts, (list, tuple)) or len(ckpts) != len(self._pipes):
            raise ValueError(f"load_state_dict: expected {{'checkpoints': [one string per "
                             f"pipeline ({len(self._pipes)})]}}, got {state_dict!r:.200}")
        for p, c in zip(self._pipes, ckpts):
            p._restore(c)
        self._pending, self._deferred = [], None
        self._unscheduled = [0] * len(self._pipes)
        self._ever_scheduled = self._ever_consumed = False
        self._first_batch = None
        self._initial_ckpts = None
        self._read_reader_meta()
        saved = self._pipes[0]._restored_iterator()
        for p in self._pipes[1:]:
            p._restored_iterator()
        if saved is not None:
            self._set_iterator_state(saved)
