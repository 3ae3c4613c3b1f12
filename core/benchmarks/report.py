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
    lines += [
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
    lines += [
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
    f = report["first_audio"]
    lines += [
        "",
        "4. time to first audio, batch 1",
        "| stock streaming s | studio s | ratio | spread |",
        "|---|---|---|---|",
        f"| {f['stock_stream_s']:.2f} | {f['studio_s']:.2f} | {f['ratio']:.2f} | "
        f"{f['spread']:.0%} |",
    ]
    fl = report["floor"]
    lines += [
        "",
        "5. batch-1 decode against the weight-read floor",
        "| GPT weights GB | one read ms | GB/s | studio step ms | % of floor | spread |",
        "|---|---|---|---|---|---|",
        f"| {fl['weights_gb']:.2f} | {fl['floor_ms']:.1f} | {fl['floor_gb_per_s']:.1f} | "
        f"{fl['step_ms']:.1f} | {fl['percent_of_floor']:.0f}% | {fl['spread']:.0%} |",
    ]
    return "\n".join(lines)


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)
