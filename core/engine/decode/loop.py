"""Studio's own GPT decode loop over ChatTTS's modules and weights.

Unlike `Chat.infer`, the KV cache is preallocated, each row (slot) sits at its own position and a
finished row takes the next segment (continuous batching). Sampling is ChatTTS's step for step, so
a seed gives stock's tokens at batch 1. A seeded job draws from its own generator, so an exact
decoder gives it the same codes whatever shares the batch. A step reads the device once, for its
rows' flags; positions and caps live on the host (`Rows`)."""

from collections.abc import Callable, Iterator

import torch

from chattts_studio.core import seeds
from chattts_studio.core.engine.decode import host_reads
from chattts_studio.core.engine.decode.fused import unit_size
from chattts_studio.core.engine.decode.job import (
    Job,
    JobSource,
    NonFiniteError,
    list_source,
    non_finite_sentence,
)
from chattts_studio.core.engine.decode.rowwise import RowSampling
from chattts_studio.core.engine.decode.slots import SlotDecoder
from chattts_studio.core.engine.request import Sampling

Failed = Callable[[Job, Exception], None]


class Rows:
    """One run's rows: the job in each slot, its books on the host (position, steps, cap,
    least steps, generator, sampling, shared) and their device copies the sampler and the
    static step read (updated in place, never rebuilt from lists); jobs in (admit, fill) and
    out (finish)."""

    def __init__(
        self, decoder: "FastDecoder", source: JobSource, sampling: Sampling, failed: Failed | None
    ) -> None:
        self.decoder, self.source, self.sampling, self.failed = decoder, source, sampling, failed
        slots = decoder.slots
        self.active = decoder.active
        self.samplings = [sampling] * slots  # each slot's job's
        self.generators: list[torch.Generator | None] = [None] * slots
        self.shared = [False] * slots  # each slot's job's Job.shared, where chunks tell it apart
        self.pos, self.steps, self.caps, self.mins = ([0] * slots for _ in range(4))
        self.buffers = decoder._run_buffers()
        self.all_out = decoder._all_rows.to(decoder.out_device)
        self.sampler = RowSampling(decoder.num_vq, decoder.out_device, draw=decoder.draw)
        self.regroup = True  # a job was admitted since the rows were last grouped
        # The running slots and their index tensors, rebuilt when they change (gather()).
        self.used: list[int] = []
        self.lanes: list[bool] = []
        self.index = self.out_index = self.vq_index = torch.zeros(0, dtype=torch.long)

    # -- jobs in and out --------------------------------------------------------------------
    def admit(self, slot: int, job: Job) -> bool:
        """Prefill the job into the row; False when its embedding failed (`failed`)."""
        d, b = self.decoder, self.buffers
        try:
            emb = job.emb() if callable(job.emb) else job.emb
        except Exception as exc:
            if self.failed is None:
                raise
            self.failed(job, exc)
            return False
        length = d.prefill(slot, emb, job.cap)
        self.pos[slot], self.steps[slot] = length, 0
        self.caps[slot], self.mins[slot] = job.cap, job.min_steps
        b.pos[slot], b.caps[slot], b.steps[slot], b.min_steps[slot] = (
            length,
            job.cap,
            0,
            job.min_steps,
        )
        b.history[slot * d.num_vq : (slot + 1) * d.num_vq] = 0
        self.shared[slot] = job.shared and d.chunked
        self.samplings[slot] = job.sampling or self.sampling
        self.generators[slot] = None
        if job.seed is not None and d._fused is not None:
            self.generators[slot] = d._slot_generator(slot, job.seed)
        elif job.seed is not None:
            self.generators[slot] = seeds.row_generator(d.out_device, job.seed)
        self.active[slot] = job
        self.regroup = True
        return True

    def place(self, job: Job, freed: int | None = None) -> int:
        """The free row a job takes: shared jobs the highest, so that they sit side by side
        (one ONNX range, a cache read as a view); others `freed`, else the lowest."""
        free = [slot for slot, held in enumerate(self.active) if held is None]
        if job.shared and self.decoder.chunked:
            return free[-1]
        return freed if freed is not None else free[0]

    def fill(self) -> None:
        """Free the rows of cancelled jobs, then give every free row the next job."""
        for slot, job in enumerate(self.active):
            if job is not None and job.cancelled:
                self.active[slot] = None
        while None in self.active:
            job = self.source()
            if job is None:
                return
            self.admit(self.place(job), job)

    def finish(self, ended_slots: list[int]) -> Iterator[Job]:
        """Yield the jobs of rows that ended; each row takes the next job at once."""
        for slot in ended_slots:
            job = self.active[slot]
            self.active[slot] = None
            assert job is not None
            yield job
            following = self.source() if self.active[slot] is None else None
            if following is not None:  # prefilled now; it samples from the next step on
                self.admit(self.place(following, slot), following)

    # -- the running rows -------------------------------------------------------------------
    def gather(self) -> None:
        """The running slots' index tensors, rebuilt only when the slots or their lanes
        changed; the sampler regrouped when a job (so maybe its Sampling) changed."""
        d = self.decoder
        used = [i for i, job in enumerate(self.active) if job is not None]
        lanes = [self.shared[slot] for slot in used]
        if used != self.used or lanes != self.lanes:
            self.used, self.lanes = used, lanes
            self.index = torch.tensor(used, device=d.device)
            self.out_index = self.index.to(d.out_device)
            vq = torch.arange(d.num_vq, device=d.out_device)
            self.vq_index = (self.out_index.view(-1, 1) * d.num_vq + vq).view(-1)
            own = [slot for slot in used if not self.shared[slot]]
            d.live_chunks = sorted({slot - slot % d.chunk for slot in own})
            lane = [slot for slot in used if self.shared[slot]]
            d.shared_rows = torch.tensor(lane, dtype=torch.long, device=d.device)
            self.regroup = True
        if self.regroup:
            self.sampler.regroup([self.samplings[slot] for slot in used])
            self.regroup = False

    @property
    def full(self) -> bool:
        return len(self.used) == self.decoder.slots

    def record(
        self, ended: list[bool], invalid: list[bool], hiddens: torch.Tensor, codes: torch.Tensor
    ) -> tuple[list[bool], list[Job]]:
        """A step's outcome into each running row's job: whether it is done, and the jobs
        whose numbers went non-finite (their rows leave, marked for a clean cache)."""
        done: list[bool] = []
        broken: list[Job] = []
        for n, slot in enumerate(self.used):
            job = self.active[slot]
            assert job is not None
            if invalid[n]:  # its row only: the others' numbers never met its own
                self.active[slot] = None
                self.decoder._tainted.add(slot)
                broken.append(job)
                done.append(False)
                continue
            self.steps[slot] += 1
            if not ended[n]:  # ChatTTS keeps no hidden state for the EOS step
                job.hiddens.append(hiddens[n])
                job.tokens.append(codes[n])
            job.ended_by_eos = bool(ended[n])
            done.append(bool(ended[n]) or self.steps[slot] >= self.caps[slot])
        return done, broken

    def span(self, slots: list[int]) -> int:
        """The KV span `slots` attend over in the next step."""
        return max(self.pos[slot] for slot in slots) + 1


class FastDecoder(SlotDecoder):
    """Decodes audio codes for many jobs on `slots` rows, yielding each job when it is done."""

    # -- the loop -------------------------------------------------------------------------
    @torch.inference_mode()
    def run(
        self,
        jobs: list[Job] | JobSource,
        sampling: Sampling,
        cancelled: Callable[[], bool],
        on_step: Callable[[list[int]], None] | None = None,
        failed: Failed | None = None,
    ) -> Iterator[Job | None]:
        """Decode every job, `slots` at a time, in the given order; yield each as it ends,
        each sampling with its own `Job.sampling`, or `sampling` when it has none;
        and None after every step, so the caller can stream audio of the running ones.
        `jobs` is a list, or a source asked for more whenever a row is free (before every
        step), so jobs can arrive while the decode runs; it ends when no row is busy and the
        source has none. A job marked `cancelled` leaves its row before the next step, not
        yielded. Returns early (without raising) when `cancelled()` turns true.
        `failed`: a job's own failure (its embedding could not be made, its numbers went
        non-finite) goes there, the job leaves its row unyielded and the others go on (the
        callback may raise to end the run); without it, such a failure raises."""
        source = list_source(jobs) if isinstance(jobs, list) else jobs
        final = isinstance(jobs, list)  # no job can join once the list is used up
        rows = Rows(self, source, sampling, failed)
        self._hidden = rows.buffers.hidden
        while not cancelled():
            rows.fill()
            if not any(job is not None for job in rows.active):
                return
            rows.gather()
            if self._fuses(rows):
                # A row free now may be joined next step (a source that is not a list): then
                # one step a unit. Units stay inside one span bucket (the one-step loop's).
                size = 1
                if rows.full or final:
                    room = [(rows.steps[s], rows.mins[s], rows.caps[s]) for s in rows.used]
                    top = max(rows.pos[slot] for slot in rows.used)
                    size = unit_size(room, min(self.fused_steps, self._bucket(top + 1) - top))
                yield from self._fused_unit(rows, size, on_step)
                continue
            yield from self._one_step(rows, on_step)

    def prefill(self, slot: int, emb: torch.Tensor, cap: int) -> int:
        """A job's prompt [1, n, hidden] into `slot`'s cache (grown when it needs room for
        `cap` more steps); its last hidden state into the run's. Returns n."""
        if slot in self._tainted:
            # Masked positions add exact zeros only when finite (0 * NaN is NaN): a row
            # after a non-finite one starts from a clean cache, which changes no bits.
            self.k_cache[:, slot].zero_()
            self.v_cache[:, slot].zero_()
            self._tainted.discard(slot)
        length = int(emb.shape[1])
        if length + cap + 1 > self.max_len:
            self._grow(length + cap + 1)
        out = self._layers(
            emb.to(self.device, self.dtype),
            torch.tensor([slot], device=self.device),
            torch.arange(length, device=self.device).view(1, -1),
            length,
        )
        self._hidden[slot] = out[0, -1].float().to(self.out_device)
        if self.step_runner is not None:
            self._onnx_prefilled(slot)
        return length

    def _fuses(self, rows: Rows) -> bool:
        """Whether the next steps run as a fused unit: one sampling group, and every row on
        its own generator unless the batch is full."""
        return (
            self._fused is not None
            and len(rows.sampler.groups) == 1
            and (rows.full or all(rows.generators[slot] is not None for slot in rows.used))
        )

    def _fail_broken(self, broken: list[Job], failed: Failed | None) -> None:
        if broken and failed is None:
            raise NonFiniteError(non_finite_sentence(self.dtype))
        for job in broken:
            assert failed is not None
            failed(job, NonFiniteError(non_finite_sentence(self.dtype)))

    def _one_step(
        self, rows: Rows, on_step: Callable[[list[int]], None] | None
    ) -> Iterator[Job | None]:
        """One step of the running rows: the heads and sampling, the step's one read of the
        device (after the next GPT step is queued, in the late-flags form), the books, then
        the GPT step of the rows that go on; yields the jobs that ended, then None."""
        b, used = rows.buffers, rows.used
        # A gathered copy: the jobs keep views of it, while `hidden` is written in place.
        rows_h = b.hidden[rows.out_index]
        if self.step_runner is not None:  # ONNX Runtime made them with the hidden states
            logits = self._onnx_logits(rows.out_index)
        elif self.exact:  # the head's product always has `slots` (or `chunk`) rows
            logits = self._logits(b.hidden)[rows.vq_index]
        else:
            logits = self._logits(rows_h)
        codes, bad = self.sample_step(
            logits,
            b.history[rows.vq_index],
            b.steps[rows.out_index],
            b.min_steps[rows.out_index],
            rows.sampler,
            [rows.generators[slot] for slot in used],
        )
        finished = codes.eq(self.eos).any(1)
        # The repetition window slides by one code per step.
        window = b.history[rows.vq_index]
        b.history[rows.vq_index] = torch.cat([window[:, 1:], codes.reshape(-1, 1)], 1)
        b.steps[rows.out_index] += 1
        flags = torch.stack([finished, bad])
        if self.ahead:
            # The flags start their way to the host; the next GPT step is queued behind
            # them for every row that may go on (a row at its cap is known to end: only an
            # EOS is news), so the device computes it while the host waits for the flags
            # and keeps its books. A row that did end stepped once for nothing: its
            # result is never read, and what it wrote lies past its end (masked).
            read = host_reads.step_flags_later(flags)
            may_go = [slot for slot in used if rows.steps[slot] + 1 < rows.caps[slot]]
            if may_go:
                self._static_rows_step(rows.index, codes, b.codes, b.pos, rows.span(may_go))
                self._advance(rows.index, rows.out_index, b.pos, b.steps, b.caps, finished)
            ended, invalid = read()
        else:  # the step's one read from the device
            ended, invalid = host_reads.step_flags(flags)
        if any(invalid) and rows.failed is None:
            raise NonFiniteError(non_finite_sentence(self.dtype))
        done, broken = rows.record(ended, invalid, rows_h, codes)
        self._fail_broken(broken, rows.failed)
        if on_step:
            on_step([job.key for job in rows.active if job is not None])
        continuing = [n for n, d in enumerate(done) if not d and not invalid[n]]
        if continuing:
            self._step_on(rows, continuing, codes, finished)
        yield from rows.finish([slot for n, slot in enumerate(used) if done[n]])
        yield None

    def _step_on(
        self, rows: Rows, continuing: list[int], codes: torch.Tensor, finished: torch.Tensor
    ) -> None:
        """The GPT step of the rows that go on (`continuing`: their places among the
        running rows), in the decoder's form; their positions move on by one."""
        b, used = rows.buffers, rows.used
        slots = [used[n] for n in continuing]
        if self.step_runner is not None:
            # The shared rows' range first: it may span exact rows, whose own chunks then
            # write their keys and values again (see gpt_rows.py).
            for exact in (False, True):
                lane_n = [n for n in continuing if rows.shared[used[n]] != exact]
                if not lane_n:
                    continue
                lane = [used[n] for n in lane_n]
                chunks = None
                if exact and self.static:
                    chunks = sorted({s - s % self.chunk for s in lane})
                keep = torch.tensor(lane_n, device=self.out_device)
                self._onnx_step(lane, codes[keep], b.pos, chunks)
            b.pos[torch.tensor(slots, device=self.device)] += 1
        elif self.ahead:  # stepped before the read
            pass
        elif self.static:
            self._static_step_on(rows, continuing, codes, finished)
        else:
            self._rows_step_on(rows, continuing, codes)
        for slot in slots:
            rows.pos[slot] += 1

    def _static_step_on(
        self, rows: Rows, continuing: list[int], codes: torch.Tensor, finished: torch.Tensor
    ) -> None:
        """Every slot steps; only the running rows move on (a device-side mask)."""
        b, used = rows.buffers, rows.used
        if self.chunked:  # only the chunks with an exact row, each its own span
            b.codes.index_copy_(0, rows.index, codes.to(self.device))
            spans: dict[int, int] = {}
            for n in continuing:
                if not rows.shared[used[n]]:
                    start = used[n] - used[n] % self.chunk
                    spans[start] = max(spans.get(start, 0), rows.pos[used[n]] + 1)
            if spans:
                self._chunk_step(b.codes, b.pos, {s: self._bucket(n) for s, n in spans.items()})
            lane = [used[n] for n in continuing if rows.shared[used[n]]]
            if lane:  # then the shared rows, one product (see gpt_rows.py)
                self._shared_step(lane, b.codes, b.pos, self._bucket(rows.span(lane)))
        else:
            span = rows.span([used[n] for n in continuing])
            self._static_rows_step(rows.index, codes, b.codes, b.pos, span)
        self._advance(rows.index, rows.out_index, b.pos, b.steps, b.caps, finished)

    def _rows_step_on(self, rows: Rows, continuing: list[int], codes: torch.Tensor) -> None:
        """The eager step of the rows that go on alone, on the codes just drawn."""
        b, used = rows.buffers, rows.used
        every = rows.full and len(continuing) == len(used)
        if len(continuing) == len(used):
            srows, scodes = rows.index, codes
        else:
            keep = torch.tensor(continuing, device=self.out_device)
            srows = torch.tensor([used[n] for n in continuing], device=self.device)
            scodes = codes[keep]
        span = rows.span([used[n] for n in continuing])
        x = self._embed_codes(scodes).to(self.device, self.dtype)
        cached = slice(None) if every else None
        out = self._layers(x, srows, b.pos[srows].view(-1, 1), span, cached)
        b.hidden[srows.to(self.out_device)] = out[:, 0].float().to(self.out_device)
        b.pos[srows] += 1

    def _fused_unit(
        self, rows: Rows, size: int, on_step: Callable[[list[int]], None] | None
    ) -> Iterator[Job | None]:
        """`size` steps as one unit (fused.py), the GPT step after it queued before the flags
        are read, then each step's books kept as the one-step loop keeps them."""
        assert self._fused is not None
        b, used, active = rows.buffers, rows.used, rows.active
        group = rows.sampler.groups[0]
        span = self._bucket(rows.span(used))
        unit = self._fused.run(size, span, group.sampling, group.warpers, rows.generators)
        read = host_reads.step_flags_later(unit.flags)
        for slot in used:
            rows.pos[slot] += size - 1
        may_go = [slot for slot in used if rows.steps[slot] + size < rows.caps[slot]]
        last = unit.flags[2 * (size - 1)]
        if may_go:
            self._static_rows_step(
                self._all_rows, unit.codes[-1], b.codes, b.pos, rows.span(may_go)
            )
            self._advance(self._all_rows, rows.all_out, b.pos, b.steps, b.caps, last)
        flags = read()
        ended_slots: list[int] = []
        broken: list[Job] = []
        for step in range(size):
            ended, invalid = flags[2 * step], flags[2 * step + 1]
            for slot in used:
                job = active[slot]
                if job is None or slot in ended_slots:
                    continue
                if invalid[slot]:  # its row only: the others' numbers never met its own
                    active[slot] = None
                    self._tainted.add(slot)
                    broken.append(job)
                    continue
                rows.steps[slot] += 1
                if not ended[slot]:  # ChatTTS keeps no hidden state for the EOS step
                    job.hiddens.append(unit.hiddens[step, slot])
                    job.tokens.append(unit.codes[step, slot])
                job.ended_by_eos = bool(ended[slot])
                if ended[slot] or rows.steps[slot] >= rows.caps[slot]:
                    ended_slots.append(slot)
            if on_step:
                on_step([job.key for job in active if job is not None])
        self._fail_broken(broken, rows.failed)
        for slot in used:
            if active[slot] is not None and slot not in ended_slots:
                rows.pos[slot] += 1
        yield from rows.finish(sorted(ended_slots))
        for _ in range(size):
            yield None
