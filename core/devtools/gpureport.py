"""The GPU run's Markdown report: what ran, what held, the figures, and the targets."""

from typing import Any

TARGET_RTF_BATCH1 = 0.05  # 940 steps/s for one stream
TARGET_X_REAL_TIME = 300.0  # all streams together, at a large batch
TARGET_FIRST_AUDIO_S = 0.15


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
            graphs = r.get("graphs_problem") or ("captured" if r["form"] == "graphs" else "")
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
            "Batch-1 step anatomy, ms a step (graphs where on):",
            "",
            "| precision | graphs | whole loop step | GPT step | heads + sampling | rest "
            "| one capture | new decoder extra |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for a in anatomy:
            lines.append(
                f"| {a['precision']} | {'on' if a['graphs'] else 'off'} | {_f(a['loop_ms'], 3)} "
                f"| {_f(a['gpt_ms'], 3)} | {_f(a['sample_ms'], 3)} | {_f(a['rest_ms'], 3)} "
                f"| {_f(a['capture_ms'], 1)} | {_f(a['new_decoder_extra_ms'], 1)} |"
            )
    for skipped in bench.get("skipped", []):
        lines.append(f"- skipped: {skipped}")
    return lines


def _targets(bench: dict[str, Any]) -> list[str]:
    rows = [r for r in bench.get("batches", []) if r.get("rtf")]
    if not rows:
        return []
    one = min((r for r in rows if r["batch"] == 1), key=lambda r: r["rtf"], default=None)
    best = max(rows, key=lambda r: r["x_real_time"] or 0)
    fa = bench.get("first_audio", {}).get("studio_s")
    lines = ["", "Targets:"]
    if one:
        met = "met" if one["rtf"] <= TARGET_RTF_BATCH1 else "missed"
        lines.append(
            f"- batch-1 RTF {one['rtf']:.4f} ({one['precision']}, graphs "
            f"{'on' if one['graphs'] else 'off'}) against {TARGET_RTF_BATCH1}: {met}"
        )
    met = "met" if (best["x_real_time"] or 0) >= TARGET_X_REAL_TIME else "missed"
    lines.append(
        f"- {best['x_real_time']:.0f}x real time at batch {best['batch']} ({best['precision']}) "
        f"against {TARGET_X_REAL_TIME:.0f}x: {met}"
    )
    if fa is not None:
        met = "met" if fa < TARGET_FIRST_AUDIO_S else "missed"
        lines.append(f"- first audio {fa:.3f} s against {TARGET_FIRST_AUDIO_S} s: {met}")
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
        lines += ["", "## pytest -m gpu", "", f"- {data.get('summary', '')}"]
    if "checks" in parts:
        lines += ["", "## Checks", "", *_checks(parts["checks"]["data"])]
    if "bench" in parts:
        data = parts["bench"]["data"]
        targets = _targets(data) if report["mode"] == "gpu" else []  # demo weights on a CPU
        lines += ["", "## Bench", "", *_bench(data), *targets]
    for p in report["parts"]:
        if p["status"] != "ok":
            error = p["data"].get("error", "")
            lines += ["", f"## {p['part']}: {p['status']}", "", "```", error, p["log_tail"], "```"]
    return "\n".join(lines) + "\n"
