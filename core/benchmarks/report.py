"""The bench's report: markdown tables (what the README's figures are made of) or JSON."""

import json
from typing import Any


def format_report(report: dict[str, Any]) -> str:
    eos = (
        "EOS held off to the cap (random weights)"
        if report.get("random_weights", True)
        else "each stops at EOS"
    )
    lines = [
        f"machine: {report['machine']}",
        f"model: {report['model']}",
        f"torch {report['torch']}, medians of {report['repeats']} runs after a warm-up",
    ]
    if "ab" in report:
        lines += _ab(report, eos)
    if "batches" in report:
        lines += _batches(report)
    if "precisions" in report:
        lines += _precisions(report)
    if "first_audio" in report:
        lines += _first_audio(report)
    if "floor" in report:
        lines += _floor(report)
    if "engines" in report:
        lines += format_engines(report["engines"])
    if "takes" in report:
        lines += format_takes(report["takes"])
    if "anatomy" in report:
        lines += format_anatomy(report["anatomy"])
    if "side" in report:
        lines += format_side(report["side"])
    if "schedule" in report:
        lines += format_schedule(report["schedule"])
    return "\n".join(lines)


def _ab(report: dict[str, Any], eos: str) -> list[str]:
    lines = [
        "",
        "1. stock Chat.infer vs studio (same weights, text, speaker, caps; "
        f"{eos}); each RTF is over the audio that side produced, ratio = stock RTF / studio RTF",
        "| case | segments | batch | planned audio s | stock audio s | studio audio s | stock s "
        "| studio s | stock RTF | studio RTF | pair ratios | median ratio | spread |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["ab"]:
        ratios = " ".join(f"{x:.2f}" for x in r["pair_ratios"])
        lines.append(
            f"| {r['case']} | {r['segments']} | {r['batch']} | {r['planned_audio_s']:.1f} | "
            f"{r['stock_audio_s']:.1f} | {r['studio_audio_s']:.1f} | "
            f"{r['stock_s']:.2f} | {r['studio_s']:.2f} | {r['stock_rtf']:.3f} | "
            f"{r['studio_rtf']:.3f} | {ratios} | **{r['median_ratio']:.2f}x** | "
            f"{r['spread']:.0%} |"
        )
    return lines


def _batches(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "2. studio by batch size",
        "| batch | audio s | RTF | steps/s (all rows) | peak memory MiB | spread |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["batches"]:
        lines.append(
            f"| {r['batch']} | {r['audio_s']:.1f} | {r['rtf']:.3f} | {r['steps_per_s']:.1f} | "
            f"{r['peak_memory_mib']:.0f} | {r['spread']:.0%} |"
        )
    return lines


def _precisions(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "3. by precision; quality against fp32: agreement of 60 near-greedy codes (random",
        "   weights make one early difference change the rest) and the first hidden state's cosine",
        "| precision | batch 1 RTF | larger batch RTF | batch 1 steps/s | code agreement "
        "| hidden cosine |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["precisions"]:
        if "refused" in r:
            lines.append(f"| {r['precision']} | refused: {r['refused']} | | | | |")
            continue
        big = next(
            v
            for k, v in r.items()
            if k.startswith("batch") and k.endswith("_rtf") and k != "batch1_rtf"
        )
        lines.append(
            f"| {r['precision']} | {r['batch1_rtf']:.3f} | {big:.3f} | "
            f"{r['batch1_steps_per_s']:.1f} | {r['greedy_code_agreement']:.0%} | "
            f"{r['first_step_hidden_cosine']:.5f} |"
        )
    return lines


def _first_audio(report: dict[str, Any]) -> list[str]:
    f = report["first_audio"]
    return [
        "",
        "4. time to first audio, batch 1",
        "| stock streaming s | studio s | ratio | spread |",
        "|---|---|---|---|",
        f"| {f['stock_stream_s']:.2f} | {f['studio_s']:.2f} | {f['ratio']:.2f} | "
        f"{f['spread']:.0%} |",
    ]


def _floor(report: dict[str, Any]) -> list[str]:
    fl = report["floor"]
    return [
        "",
        "5. batch-1 decode against the weight-read floor",
        "| GPT weights GB | one read ms | GB/s | studio step ms | % of floor | spread |",
        "|---|---|---|---|---|---|",
        f"| {fl['weights_gb']:.2f} | {fl['floor_ms']:.1f} | {fl['floor_gb_per_s']:.1f} | "
        f"{fl['step_ms']:.1f} | {fl['percent_of_floor']:.0f}% | {fl['spread']:.0%} |",
    ]


def format_engines(section: dict[str, Any]) -> list[str]:
    """The engine section's three tables: decode speed, the long text's RTF, agreement."""
    rows = section["rows"]
    sizes = section["batch_sizes"]
    lines = [
        "",
        f"6. engines: decode steps/s by batch ({section['threads']} threads), timed at the "
        f"decoder: a run of {section['long_steps']} steps minus one of "
        f"{section['short_steps']} (prompt and setup cancel out), every row the same sentence, "
        "EOS held off; steps/s counts all rows, ms is one step",
        "| engine | precision | " + " | ".join(f"batch {b}" for b in sizes) + " | spread |",
        "|---|---|" + "---|" * len(sizes) + "---|",
    ]
    for r in rows:
        head = f"| {r['engine']} | {r['precision']} |"
        if "unavailable" in r:
            lines.append(f"{head} unavailable: {r['unavailable']} |" + " |" * len(sizes))
            continue
        cells = [f"{d['row_steps_per_s']:.1f} ({d['step_ms']:.1f} ms)" for d in r["decode"]]
        spread = max(d["spread"] for d in r["decode"])
        lines.append(f"{head} {' | '.join(cells)} | {spread:.0%} |")
    refine = "on" if section["refine_text"] else "off"
    lines += [
        "",
        f"7. engines: long text ({section['long_chars']} chars) through the whole engine (text "
        "to audio, vocoder included) at the user's defaults (automatic batch, default segment "
        f"size and sampling; refine-text {refine}); medians of {section['repeats']} run(s) "
        "after a warm-up; ratio = torch fp32 RTF / this RTF",
        "| engine | precision | segments | batch | audio s | wall s | RTF | ratio | spread |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        head = f"| {r['engine']} | {r['precision']} |"
        if "unavailable" in r:
            lines.append(f"{head} unavailable: {r['unavailable']} | | | | | | |")
            continue
        t = r["long_text"]
        ratio = t.get("ratio_to_torch_fp32")
        lines.append(
            f"{head} {t['segments']} | {t['batch']} | {t['audio_s']:.1f} | {t['wall_s']:.2f} | "
            f"{t['rtf']:.3f} | {f'**{ratio:.2f}x**' if ratio else ''} | {t['spread']:.0%} |"
        )
    default = next(
        (
            r
            for r in rows
            if r["engine"] == section["default_engine"]
            and r["precision"] == "fp32"
            and "long_text" in r
        ),
        None,
    )
    if default is not None and default["long_text"].get("ratio_to_torch_fp32"):
        lines.append(
            f"\nthe CPU default (auto: {section['default_engine']} fp32) against today's default "
            f"(torch fp32) on the long text: "
            f"**{default['long_text']['ratio_to_torch_fp32']:.2f}x**"
        )
    lines += [
        "",
        f"8. engines: agreement with torch fp32. Teacher-forced: torch fp32's "
        f"{section['agree_steps']} codes fed to each engine step by step, each step's logits "
        "compared (max |difference| over the four code streams; KL(torch || other) of the "
        f"softmax at temperature {section['temperature']:g}, the engine's default, averaged "
        "over the streams; max and mean over the steps). Free-running: the same seed, the "
        f"leading steps (of {section['free_steps']}) whose four codes equal torch fp32's. "
        "Random weights make nearly tied logits, so one tiny difference changes a draw and "
        "everything after it: the code agreement is pessimistic",
        "| engine | precision | logits max diff | per-step max diff, mean | KL mean | KL max "
        "| equal leading codes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        head = f"| {r['engine']} | {r['precision']} |"
        if "unavailable" in r:
            lines.append(f"{head} unavailable: {r['unavailable']} | | | | |")
            continue
        a = r["agreement"]
        lines.append(
            f"{head} {a['logits_max_diff']:.2e} | {a['logits_mean_max_diff']:.2e} | "
            f"{a['kl_mean']:.2e} | {a['kl_max']:.2e} | "
            f"{a['equal_leading_steps']} of {a['free_steps']} |"
        )
    return lines


def format_takes(section: dict[str, Any]) -> list[str]:
    rows = section["rows"]
    re = section["reroll"]
    op = section["open"]
    lines = [
        "",
        f"9. takes of one segment ({section['segment_chars']} characters), medians of "
        f"{section['repeats']} run(s), A B A B; synth of the same segment (refine off) "
        f"{section['synth_seconds']:.2f} s",
        "| takes | seconds | x one take |",
        "|---|---|---|",
    ]
    lines += [f"| {r['takes']} | {r['seconds']:.2f} | {r['ratio']:.2f}x |" for r in rows]
    lines += [
        "",
        f"10. re-roll 1 segment of a {re['segments']}-segment project: {re['seconds']:.2f} s "
        f"against synth of that segment {re['synth_seconds']:.2f} s ({re['ratio']:.2f}x); "
        f"takes decoded per re-roll: {re['decoded_takes']}",
        f"11. open a project of {op['segments']} segments x {op['takes']} takes: read "
        f"{op['load_seconds'] * 1000:.0f} ms, listing with every take's flags "
        f"{op['listing_seconds'] * 1000:.0f} ms",
    ]
    return lines


# What each stage of the anatomy covers (core/benchmarks/anatomy.py times them).
ANATOMY_STAGES = {
    "refine": "the refine-text pass (on ONNX Runtime: the exported step; torch: ChatTTS's loop)",
    "prompt": "normalise, tokenise, embed each segment's text",
    "prefill": "the GPT over each segment's prompt (PyTorch)",
    "steps": "the GPT's one-position decode steps",
    "sampling": "penalty, top-P/K and the draw, per step",
    "vocoder": "DVAE decoder + Vocos + ISTFT",
    "writing": "the audio file: open, samples, close",
}


def format_anatomy(section: dict[str, Any]) -> list[str]:
    """The anatomy's table: seconds, share of the wall time and calls per stage."""
    wall = section["wall_s"]
    refine = "on" if section["refine_text"] else "off"
    lines = [
        "",
        f"12. anatomy: a long text ({section['chars']} chars, {section['segments']} segments, "
        f"batch {section['batch']}) through the synth service (text to a WAV file) at the "
        f"user's defaults (refine-text {refine}, automatic batch, segment size "
        f"{section['segment_size']}, default sampling), {section['engine']} "
        f"{section['precision']}, {section['threads']} threads; one run after a warm-up; "
        f"{section['audio_s']:.1f} s of audio ({section['gpt_steps']} GPT row-steps) in "
        f"{wall:.2f} s: RTF {section['rtf']:.3f}",
        "| stage | what | seconds | share of wall | calls | ms a call |",
        "|---|---|---|---|---|---|",
    ]
    for r in section["stages"]:
        lines.append(
            f"| {r['stage']} | {ANATOMY_STAGES.get(r['stage'], '')} | {r['seconds']:.2f} | "
            f"{r['share']:.1%} | {r['calls']} | {r['ms_per_call']:.1f} |"
        )
    lines += [
        f"| stages | their sum | {section['stages_s']:.2f} | {section['stages_s'] / wall:.1%} "
        "| | |",
        f"| other | wall less the stages: the loop's host work, planning | "
        f"{section['other_s']:.2f} | {section['other_share']:.1%} | | |",
        f"| wall | text to file | {wall:.2f} | 100.0% | | |",
        "",
        f"stages ran on {section['stage_threads']} thread(s), overlapping for "
        f"{section['overlap_s']:.2f} s (counted once in `other`); calls nested in another "
        f"stage (counted there): {section['nested_calls']}",
    ]
    if "step_by_position" in section:
        lines += [
            "",
            f"The ONNX Runtime step alone at batch {section['batch']}, every row at one "
            "position (mean of 6 steps); cache GB/s: the extra key/value bytes over the extra "
            "time against the first row",
            "| position | ms a step | keys and values read, MB | cache GB/s |",
            "|---|---|---|---|",
        ]
        for r in section["step_by_position"]:
            rate = r.get("kv_gb_per_s")
            lines.append(
                f"| {r['position']} | {r['ms']:.1f} | {r['kv_mb']:.0f} | "
                f"{'' if rate is None else f'{rate:.1f}'} |"
            )
    return lines


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)


def format_side(table: dict[str, Any], title: str = "Vocoder beside the steps") -> list[str]:
    """The side bench's table (core/benchmarks/side.py); the GPU report's too, titled."""

    def f(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    diff = table.get("audio_max_diff")
    same = "one run" if diff is None else ("equal" if diff == 0 else f"max diff {diff:.2e}")
    lines = [
        "",
        f"{title} against inline ({table['chars']} characters, refine "
        f"{'on' if table['refine_text'] else 'off'}, A B A B): best inline "
        f"{f(table['best_off_s'])} s, best beside {f(table['best_on_s'])} s "
        f"(x{f(table['x_on'], 3)}); medians {f(table['median_off_s'])} / "
        f"{f(table['median_on_s'])} s; audio: {same}",
        "",
        "| vocoder | segments | wall s | audio s | RTF |",
        "|---|---|---|---|---|",
    ]
    for r in table["rows"]:
        lines.append(
            f"| {'beside' if r['vocoder_stream'] else 'inline'} | {r['segments']} "
            f"| {f(r['wall_s'])} | {f(r['audio_s'], 1)} | {f(r['rtf'], 4)} |"
        )
    lines += [f"- skipped: {s}" for s in table.get("skipped", [])]
    if table.get("first_audio_s"):
        waits = ", ".join(f"{w:.2f}" for w in table["first_audio_s"])
        lines.append(f"- first audio (a listener, as the window plays; inline): {waits} s")
    return lines


def format_schedule(table: dict[str, Any]) -> list[str]:
    """The schedule bench's table (core/benchmarks/schedule.py)."""

    def f(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [
        "",
        f"First segment first against the first batch together ({table['chars']} characters, "
        f"refine {'on' if table['refine_text'] else 'off'}, a listener, A B A B); wall ratio "
        f"(best head first / best together): {f(table['wall_ratio'], 3)}",
        "",
        "| rows start | first audio s | wall s | audio s | bar max error | time left excess s |",
        "|---|---|---|---|---|---|",
    ]
    for r in table["rows"]:
        lines.append(
            f"| {'head first' if r['head_first'] else 'together'} | {f(r['first_audio_s'])} "
            f"| {f(r['wall_s'])} | {f(r['audio_s'], 1)} | {f(r['bar_max_error'], 3)} "
            f"| {f(r['time_left_max_excess_s'])} |"
        )
    waits = ", ".join(f"{w:.2f}" for w in table["refine_off_first_audio_s"])
    lines.append(f"- first audio with refine off (head first): {waits} s")
    return lines
