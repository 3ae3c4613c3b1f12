"""The GPU run's Markdown report: what ran, what held, the figures, and the targets."""

from typing import Any

# The GPU run's targets on the H200 (docs/gpu.md, "Running the GPU check").
TARGET_STEPS_BATCH1 = 1000.0  # steps/s for one stream (RTF <= 0.05 with the vocoder)
TARGET_X_REAL_TIME = 1000.0  # all streams together, at the best batch
TARGET_FIRST_AUDIO_S = 0.06
TARGET_STREAMS = 500  # concurrent real-time clients through the API
TARGET_STREAM_P95_S = 0.3  # their p95 first audio


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _env(env: dict[str, Any]) -> list[str]:
    lines = [
        f"- Python {env.get('python')}, torch {env.get('torch')} (CUDA build "
        f"{env.get('cuda_build')}); {env.get('cuda_status')}",
    ]
    if env.get("arch_list"):
        lines.append(f"- architectures in this torch build: {' '.join(env['arch_list'])}")
    for device in env.get("devices", []):
        precisions = ", ".join(f"{k}: {v}" for k, v in device["precisions"].items())
        problem = f" (unusable: {device['problem']})" if device.get("problem") else ""
        lines.append(f"- {device['label']}{problem}: {precisions}")
    return lines


def _checks(checks: dict[str, Any]) -> list[str]:
    lines = []
    eq = checks.get("equality", {})
    if "rows" in eq:
        lines += [
            "Codes against stock `generate` at batch 1 (same seed):",
            "",
            "| form | top-K | tokens equal | hidden max diff | graphs |",
            "|---|---|---|---|---|",
        ]
        for r in eq["rows"]:
            graphs = r.get("graphs_problem") or (
                "captured" if r["form"].startswith("graphs") else ""
            )
            if r.get("fused_replays"):
                graphs += f" ({r['fused_replays']} units replayed)"
            lines.append(
                f"| {r['form']} | {r['top_k']} | {r['tokens_equal']} | "
                f"{r['hidden_max_diff']:.2e} | {graphs} |"
            )
        lines.append("")
    for name in ("nan", "cancel", "oom", "batcher"):
        value = checks.get(name)
        if value is not None:
            shown = {k: v for k, v in value.items() if k != "trace"}
            lines.append(f"- {name}: {shown}")
    return lines


def _bench(bench: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for r in bench.get("ab", []):
        lines.append(
            f"- A/B {r['case']}: stock {r['stock_s']:.2f} s for {r['stock_audio_s']:.1f} s of "
            f"audio (RTF {r['stock_rtf']:.3f}), Studio {r['studio_s']:.2f} s for "
            f"{r['studio_audio_s']:.1f} s (RTF {r['studio_rtf']:.3f}): **{r['median_ratio']:.2f}x**"
        )
    fa = bench.get("first_audio")
    if fa:
        lines.append(
            f"- first audio: stock streaming {fa['stock_stream_s']:.3f} s, Studio "
            f"{fa['studio_s']:.3f} s (target < {TARGET_FIRST_AUDIO_S} s)"
        )
    rows = bench.get("batches", [])
    if rows:
        lines += [
            "",
            "| precision | graphs | batch | RTF | x real time | steps/s | steps/s per stream "
            "| peak MiB | MiB per stream |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r['precision']} | {'on' if r['graphs'] else 'off'} | {r['batch']} | "
                f"{_f(r['rtf'], 4)} | {_f(r['x_real_time'], 1)} | {_f(r['steps_per_s'], 0)} | "
                f"{_f(r['steps_per_s_per_stream'], 0)} | {_f(r['peak_mib'], 0)} | "
                f"{_f(r['per_stream_mib'], 1)} |"
            )
    anatomy = bench.get("anatomy", [])
    if anatomy:
        lines += [
            "",
            "Step anatomy, ms a step (graphs where on; a long run minus a short one, so a "
            "job's admission is its own column), and profiler traces (long minus short):",
            "",
            "| precision | batch | graphs | whole loop step | GPT step | heads + sampling | rest "
            "| admitting a job | one capture | new decoder extra | kernels (ops) a step "
            "| kernels (ops) a job admitted | device / wall | host gap ms a step |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for a in anatomy:
            p = a.get("profile") or {}
            lines.append(
                f"| {a['precision']} | {a.get('batch', 1)} | {'on' if a['graphs'] else 'off'} "
                f"| {_f(a['loop_ms'], 3)} | {_f(a['gpt_ms'], 3)} | {_f(a['sample_ms'], 3)} "
                f"| {_f(a['rest_ms'], 3)} | {_f(a.get('admit_ms'), 2)} | {_f(a['capture_ms'], 1)} "
                f"| {_f(a['new_decoder_extra_ms'], 1)} | {_f(p.get('per_step'), 0)} "
                f"{p.get('unit', '')} | {_f(p.get('per_admitted_job'), 0)} "
                f"| {_f(p.get('device_share'), 2)} "
                f"| {_f(p.get('host_gap_ms_per_step'), 3)} |"
            )
        for a in anatomy:
            top = (a.get("profile") or {}).get("top") or []
            if top:
                shown = ", ".join(f"{name[:40]} {us / 1000:.1f} ms" for name, us in top[:5])
                lines.append(f"- batch {a.get('batch', 1)} profile, most time: {shown}")
    for table in bench.get("levers", []):
        lines += [
            "",
            f"Levers at batch {table['batch']} ({table.get('precision')}), GPT decode steps/s "
            f"of all rows (a run of {table['long_steps']} steps minus one of "
            f"{table['short_steps']}); x: against the first row; codes: equal to the first "
            "row's:",
            "",
            "| series | levers on | steps/s | ms a step | x | codes | fused units (replayed) "
            "| graphs problem |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in table["rows"]:
            lines.append(
                f"| {r['series']} | {r['levers']} | {_f(r['steps_per_s'], 0)} "
                f"| {_f(r['ms_per_step'], 3)} | {_f(r['x_baseline'], 2)} "
                f"| {'equal' if r['same_codes'] else 'DIFFER'} "
                f"| {r['fused_units']} ({r['fused_replays']}) | {r['graph_problem'] or '-'} |"
            )
        for skipped in table.get("skipped", []):
            lines.append(f"- skipped: {skipped}")
    for table in bench.get("vocoder_stream", []):
        lines += _vocoder_stream(table)
    for table in bench.get("refine", []):
        lines += _refine(table)
    streams = bench.get("streams")
    if streams:
        lines += [
            "",
            f"- real-time streams through the API ({streams.get('precision')}, "
            f"{streams.get('slots')} rows, vocoder stream "
            f"{'on' if streams.get('vocoder_stream') else 'off'}): "
            f"**{streams['realtime_streams']}**"
            f"{' (the search cap)' if streams.get('capped') else ''}, first audio p50 "
            f"{_f(streams.get('first_audio_p50_s'))} s, "
            f"p95 {_f(streams.get('first_audio_p95_s'))} s",
        ]
        for r in streams.get("rounds", []):
            lines.append(
                f"  - {r['clients']} at once: real time {r['realtime']}, p95 first audio "
                f"{_f(r['first_audio_p95_s'])} s, round {_f(r['wall_s'], 1)} s"
            )
    for skipped in bench.get("skipped", []):
        lines.append(f"- skipped: {skipped}")
    return lines


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def _targets(bench: dict[str, Any]) -> list[str]:
    """The targets, each met or missed (or not measured: what did not run)."""
    rows = [r for r in bench.get("batches", []) if r.get("steps_per_s")]
    lines = ["", "Targets:"]
    one = max((r for r in rows if r["batch"] == 1), key=lambda r: r["steps_per_s"], default=None)
    if one:
        lines.append(
            f"- batch 1: {one['steps_per_s']:.0f} steps/s (RTF {_f(one['rtf'], 4)}, "
            f"{one['precision']}, graphs {'on' if one['graphs'] else 'off'}) against "
            f">= {TARGET_STEPS_BATCH1:.0f}: {_met(one['steps_per_s'] >= TARGET_STEPS_BATCH1)}"
        )
    else:
        lines.append("- batch 1 steps/s: not measured")
    fa = (bench.get("first_audio") or {}).get("studio_s")
    if fa is not None:
        lines.append(
            f"- first audio {fa:.3f} s against <= {TARGET_FIRST_AUDIO_S} s: "
            f"{_met(fa <= TARGET_FIRST_AUDIO_S)}"
        )
    else:
        lines.append("- first audio: not measured")
    best = max(rows, key=lambda r: r["x_real_time"] or 0, default=None)
    if best:
        x = best["x_real_time"] or 0.0
        lines.append(
            f"- {x:.0f}x real time at batch {best['batch']} ({best['precision']}) against "
            f">= {TARGET_X_REAL_TIME:.0f}x: {_met(x >= TARGET_X_REAL_TIME)}"
        )
    else:
        lines.append("- x real time at the best batch: not measured")
    streams = bench.get("streams")
    if streams:
        n, p95 = streams["realtime_streams"], streams.get("first_audio_p95_s")
        ok = n >= TARGET_STREAMS and p95 is not None and p95 <= TARGET_STREAM_P95_S
        lines.append(
            f"- {n} real-time streams, p95 first audio {_f(p95)} s against >= {TARGET_STREAMS} "
            f"with p95 <= {TARGET_STREAM_P95_S} s: {_met(ok)}"
        )
    else:
        lines.append("- real-time streams: not measured")
    return lines


def markdown(report: dict[str, Any]) -> str:
    parts = {p["part"]: p for p in report["parts"]}
    lines = [f"# ChatTTS Studio GPU run ({report['mode']} mode)", ""]
    lines += ["| part | status | seconds |", "|---|---|---|"]
    lines += [f"| {p['part']} | {p['status']} | {p['seconds']:.0f} |" for p in report["parts"]]
    if "env" in parts:
        lines += ["", "## Machine", "", *_env(parts["env"]["data"])]
    if "pytest" in parts:
        data = parts["pytest"]["data"]
        lines += ["", "## pytest -m 'gpu or fake_cuda'", "", f"- {data.get('summary', '')}"]
    if "checks" in parts:
        lines += ["", "## Checks", "", *_checks(parts["checks"]["data"])]
    if "bench" in parts:
        data = parts["bench"]["data"]
        targets = _targets(data)
        if report["mode"] != "gpu":
            targets.append("- (CPU mode, demo weights: the targets are for the H200 run)")
        lines += ["", "## Bench", "", *_bench(data), *targets]
    for p in report["parts"]:
        if p["status"] != "ok":
            error = p["data"].get("error", "")
            lines += ["", f"## {p['part']}: {p['status']}", "", "```", error, p["log_tail"], "```"]
    return "\n".join(lines) + "\n"


def _vocoder_stream(table: dict[str, Any] | None) -> list[str]:
    """The vocoder-on-a-second-stream lever: whole syntheses off and on, A B A B."""
    from chattts_studio.core.benchmarks.report import format_side

    if not table:
        return []
    title = f"Vocoder on a second stream at batch {table['batch']} ({table.get('precision')})"
    return format_side(table, title)


def _refine(table: dict[str, Any] | None) -> list[str]:
    """ChatTTS's refine loop against the studio's pass on the card's torch step."""
    if not table:
        return []
    lines = [
        "",
        f"Refine-text pass ({table.get('precision')}), ChatTTS's loop against the studio's "
        "(decode/text_pass.py, torch's step), A B A B, seed 7:",
        "",
        "| texts | pass | seconds | tokens | tokens equal to stock's |",
        "|---|---|---|---|---|",
    ]
    for r in table["rows"]:
        same = r.get("same_tokens")
        lines.append(
            f"| {r['batch']} | {r['side']} | {_f(r['seconds'], 3)} | {r['tokens']} "
            f"| {'-' if same is None else ('yes' if same else 'NO')} |"
        )
    lines += [f"- skipped: {s}" for s in table.get("skipped", [])]
    return lines
