"""Studio's own GPT decode loop over ChatTTS's modules and weights.

Unlike `Chat.infer`, the KV cache is preallocated, each row (slot) sits at its own position and a
finished row takes the next segment (continuous batching). Sampling is ChatTTS's step for step, so
a seed gives stock's tokens at batch 1. A seeded job draws from its own generator, so an exact
decoder gives it the same codes whatever shares the batch. A step reads the device once, for its
rows' flags; positions and caps live on the host."""

from collections.abc import Callable, Iterator

import torch

from chattts_studio.core import seeds
from chattts_studio.core.engine import host_reads
from chattts_studio.core.engine.decode.fused import unit_size
from chattts_studio.core.engine.decode.job import (
    Job,
    JobSource,
    NonFiniteError,
    list_source,
    non_finite_sentence,
)
from chattts_studio.core.engine.decode.rowwise import RowSampling, Sampling
from chattts_studio.core.engine.decode.slots import SlotDecoder


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
        failed: Callable[[Job, Exception], None] | None = None,
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
        row_sampling = RowSampling(self.num_vq, self.out_device, draw=self.draw)
        samplings = [sampling] * self.slots  # each slot's job's
        regroup = True  # a job was admitted since the rows were last grouped
        source = list_source(jobs) if isinstance(jobs, list) else jobs
        active = self.active
        generators: list[torch.Generator | None] = [None] * self.slots
        shared = [False] * self.slots  # each slot's job's Job.shared, where chunks tell it apart
        # Host copies: known without asking the device.
        pos = [0] * self.slots
        steps = [0] * self.slots
        caps = [0] * self.slots
        mins = [0] * self.slots
        final = isinstance(jobs, list)  # no job can join once the list is used up
        # Device copies the sampling reads; updated in place, never rebuilt from lists.
        b = self._run_buffers()
        pos_d, steps_d, min_d, caps_d = b.pos, b.steps, b.min_steps, b.caps
        history, codes_all = b.history, b.codes
        hidden = self._hidden = b.hidden
        vq = torch.arange(self.num_vq, device=self.out_device)
        all_rows = self._all_rows[: self.slots]
        all_out_rows = all_rows.to(self.out_device)

        def admit(slot: int, job: Job) -> bool:
            """Prefill the job into the row; False when its embedding failed (`failed`)."""
            nonlocal regroup
            try:
                emb = job.emb() if callable(job.emb) else job.emb
            except Exception as exc:
                if failed is None:
                    raise
                failed(job, exc)
                return False
            if slot in self._tainted:
                # Masked positions add exact zeros only when finite (0 * NaN is NaN): a row
                # after a non-finite one starts from a clean cache, which changes no bits.
                self.k_cache[:, slot].zero_()
                self.v_cache[:, slot].zero_()
                self._tainted.discard(slot)
            length = int(emb.shape[1])
            if length + job.cap + 1 > self.max_len:
                self._grow(length + job.cap + 1)
            out = self._layers(
                emb.to(self.device, self.dtype),
                torch.tensor([slot], device=self.device),
                torch.arange(length, device=self.device).view(1, -1),
                length,
            )
            hidden[slot] = out[0, -1].float().to(self.out_device)
            if self.step_runner is not None:
                self._onnx_prefilled(slot)
            pos[slot], steps[slot], caps[slot], mins[slot] = length, 0, job.cap, job.min_steps
            pos_d[slot] = length
            caps_d[slot] = job.cap
            steps_d[slot] = 0
            min_d[slot] = job.min_steps
            history[slot * self.num_vq : (slot + 1) * self.num_vq] = 0
            generators[slot] = None
            shared[slot] = job.shared and self.chunked
            samplings[slot] = job.sampling or sampling
            regroup = True
            if job.seed is not None and self._fused is not None:
                generators[slot] = self._slot_generator(slot, job.seed)
            elif job.seed is not None:
                generators[slot] = seeds.row_generator(self.out_device, job.seed)
            active[slot] = job
            return True

        def place(job: Job, freed: int | None = None) -> int:
            """The free row a job takes: shared jobs the highest, so that they sit side by
            side (one ONNX range, a cache read as a view); others `freed`, else the lowest."""
            free = [slot for slot, held in enumerate(active) if held is None]
            if job.shared and self.chunked:
                return free[-1]
            return freed if freed is not None else free[0]

        def fill() -> None:
            """Free the rows of cancelled jobs, then give every free row the next job."""
            for slot, job in enumerate(active):
                if job is not None and job.cancelled:
                    active[slot] = None
            while None in active:
                job = source()
                if job is None:
                    return
                admit(place(job), job)

        def finish(ended_slots: list[int]) -> Iterator[Job]:
            """Yield the jobs of rows that ended; each row takes the next job at once."""
            for slot in ended_slots:
                job = active[slot]
                active[slot] = None
                assert job is not None
                yield job
                following = source() if active[slot] is None else None
                if following is not None:  # prefilled now; it samples from the next step on
                    admit(place(following, slot), following)

        def fused_unit(size: int) -> Iterator[Job | None]:
            """`size` steps as one unit (fused.py), the GPT step after it queued before the
            flags are read, then each step's books kept as the one-step loop keeps them."""
            assert self._fused is not None
            group = row_sampling.groups[0]
            span = self._bucket(max(pos[slot] for slot in used) + 1)
            unit = self._fused.run(size, span, group.sampling, group.warpers, generators)
            read = host_reads.step_flags_later(unit.flags)
            for slot in used:
                pos[slot] += size - 1
            may_go = [slot for slot in used if steps[slot] + size < caps[slot]]
            last = unit.flags[2 * (size - 1)]
            if may_go:
                span = max(pos[slot] for slot in may_go) + 1
                self._static_rows_step(all_rows, unit.codes[-1], codes_all, pos_d, span)
                self._advance(all_rows, all_out_rows, pos_d, steps_d, caps_d, last)
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
                    steps[slot] += 1
                    if not ended[slot]:  # ChatTTS keeps no hidden state for the EOS step
                        job.hiddens.append(unit.hiddens[step, slot])
                        job.tokens.append(unit.codes[step, slot])
                    job.ended_by_eos = bool(ended[slot])
                    if ended[slot] or steps[slot] >= caps[slot]:
                        ended_slots.append(slot)
                if on_step:
                    on_step([job.key for job in active if job is not None])
            if broken and failed is None:
                raise NonFiniteError(non_finite_sentence(self.dtype))
            for job in broken:
                assert failed is not None
                failed(job, NonFiniteError(non_finite_sentence(self.dtype)))
            for slot in used:
                if active[slot] is not None and slot not in ended_slots:
                    pos[slot] += 1
            yield from finish(sorted(ended_slots))
            for _ in range(size):
                yield None

        used: list[int] = []
        lanes: list[bool] = []
        rows = out_rows = vq_rows = torch.zeros(0, dtype=torch.long)
        while not cancelled():
            fill()
            if not any(job is not None for job in active):
                return
            now_used = [i for i, job in enumerate(active) if job is not None]
            now_lanes = [shared[slot] for slot in now_used]
            if now_used != used or now_lanes != lanes:  # rebuild the index tensors once
                used, lanes = now_used, now_lanes
                rows = torch.tensor(used, device=self.device)
                out_rows = rows.to(self.out_device)
                vq_rows = (out_rows.view(-1, 1) * self.num_vq + vq).view(-1)
                own = [slot for slot in used if not shared[slot]]
                self.live_chunks = sorted({slot - slot % self.chunk for slot in own})
                lane = [slot for slot in used if shared[slot]]
                self.shared_rows = torch.tensor(lane, dtype=torch.long, device=self.device)
                regroup = True
            if regroup:  # a row's job (so maybe its Sampling) changed
                row_sampling.regroup([samplings[slot] for slot in used])
                regroup = False
            full = len(used) == self.slots
            if (
                self._fused is not None
                and len(row_sampling.groups) == 1
                and (full or all(generators[slot] is not None for slot in used))
            ):
                # A row free now may be joined next step (a source that is not a list): then
                # one step a unit. Units stay inside one span bucket (the one-step loop's).
                size = 1
                if full or final:
                    room = [(steps[slot], mins[slot], caps[slot]) for slot in used]
                    top = max(pos[slot] for slot in used)
                    size = unit_size(room, min(self.fused_steps, self._bucket(top + 1) - top))
                yield from fused_unit(size)
                continue
            # A gathered copy: the jobs keep views of it, while `hidden` is written in place.
            rows_h = hidden[out_rows]
            if self.step_runner is not None:  # ONNX Runtime made them with the hidden states
                logits = self._onnx_logits(out_rows)
            elif self.exact:  # the head's product always has `slots` (or `chunk`) rows
                logits = self._logits(hidden)[vq_rows]
            else:
                logits = self._logits(rows_h)
            codes, bad = self.sample_step(
                logits,
                history[vq_rows],
                steps_d[out_rows],
                min_d[out_rows],
                row_sampling,
                [generators[slot] for slot in used],
            )
            finished = codes.eq(self.eos).any(1)
            # The repetition window slides by one code per step.
            history[vq_rows] = torch.cat([history[vq_rows][:, 1:], codes.reshape(-1, 1)], 1)
            steps_d[out_rows] += 1
            flags = torch.stack([finished, bad])
            if self.ahead:
                # The flags start their way to the host; the next GPT step is queued behind
                # them for every row that may go on (a row at its cap is known to end: only an
                # EOS is news), so the device computes it while the host waits for the flags
                # and keeps its books. A row that did end stepped once for nothing: its
                # result is never read, and what it wrote lies past its end (masked).
                read = host_reads.step_flags_later(flags)
                may_go = [slot for slot in used if steps[slot] + 1 < caps[slot]]
                if may_go:
                    span = max(pos[slot] for slot in may_go) + 1
                    self._static_rows_step(rows, codes, codes_all, pos_d, span)
                    self._advance(rows, out_rows, pos_d, steps_d, caps_d, finished)
                ended, invalid = read()
            else:  # the step's one read from the device
                ended, invalid = host_reads.step_flags(flags)
            if any(invalid) and failed is None:
                raise NonFiniteError(non_finite_sentence(self.dtype))
            done: list[bool] = []
            broken: list[Job] = []
            for n, slot in enumerate(used):
                job = active[slot]
                assert job is not None
                if invalid[n]:  # its row only: the others' numbers never met its own
                    active[slot] = None
                    self._tainted.add(slot)
                    broken.append(job)
                    done.append(False)
                    continue
                steps[slot] += 1
                if not ended[n]:  # ChatTTS keeps no hidden state for the EOS step
                    job.hiddens.append(rows_h[n])
                    job.tokens.append(codes[n])
                job.ended_by_eos = bool(ended[n])
                done.append(bool(ended[n]) or steps[slot] >= caps[slot])
            for job in broken:
                assert failed is not None
                failed(job, NonFiniteError(non_finite_sentence(self.dtype)))
            if on_step:
                on_step([job.key for job in active if job is not None])
            continuing = [n for n, d in enumerate(done) if not d and not invalid[n]]
            if continuing and self.step_runner is not None:
                # The shared rows' range first: it may span exact rows, whose own chunks then
                # write their keys and values again (see gpt_rows.py).
                for exact in (False, True):
                    lane_n = [n for n in continuing if shared[used[n]] != exact]
                    if not lane_n:
                        continue
                    slots = [used[n] for n in lane_n]
                    chunks = None
                    if exact and self.static:
                        chunks = sorted({s - s % self.chunk for s in slots})
                    keep = torch.tensor(lane_n, device=self.out_device)
                    self._onnx_step(slots, codes[keep], pos_d, chunks)
                slots = [used[n] for n in continuing]
                pos_d[torch.tensor(slots, device=self.device)] += 1
                for slot in slots:
                    pos[slot] += 1
            elif continuing and self.ahead:  # stepped before the read
                for n in continuing:
                    pos[used[n]] += 1
            elif continuing and self.static:
                # Every slot steps; only the running rows move on (a device-side mask).
                if self.chunked:  # only the chunks with an exact row, each its own span
                    codes_all.index_copy_(0, rows, codes.to(self.device))
                    spans: dict[int, int] = {}
                    for n in continuing:
                        if not shared[used[n]]:
                            start = used[n] - used[n] % self.chunk
                            spans[start] = max(spans.get(start, 0), pos[used[n]] + 1)
                    if spans:
                        self._chunk_step(
                            codes_all, pos_d, {s: self._bucket(n) for s, n in spans.items()}
                        )
                    lane = [used[n] for n in continuing if shared[used[n]]]
                    if lane:  # then the shared rows, one product (see gpt_rows.py)
                        span = self._bucket(max(pos[slot] for slot in lane) + 1)
                        self._shared_step(lane, codes_all, pos_d, span)
                else:
                    span = max(pos[used[n]] for n in continuing) + 1
                    self._static_rows_step(rows, codes, codes_all, pos_d, span)
                self._advance(rows, out_rows, pos_d, steps_d, caps_d, finished)
                for n in continuing:
                    pos[used[n]] += 1
            elif continuing:
                # Next step's input for the rows still running: the codes just drawn.
                every = full and len(continuing) == len(used)
                if len(continuing) == len(used):
                    srows, scodes = rows, codes
                else:
                    keep = torch.tensor(continuing, device=self.out_device)
                    srows = torch.tensor([used[n] for n in continuing], device=self.device)
                    scodes = codes[keep]
                span = max(pos[used[n]] for n in continuing) + 1
                x = self._embed_codes(scodes).to(self.device, self.dtype)
                cached = slice(None) if every else None
                out = self._layers(x, srows, pos_d[srows].view(-1, 1), span, cached)
                hidden[srows.to(self.out_device)] = out[:, 0].float().to(self.out_device)
                pos_d[srows] += 1
                for n in continuing:
                    pos[used[n]] += 1
            yield from finish([slot for n, slot in enumerate(used) if done[n]])
            yield None
