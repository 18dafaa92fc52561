"""The figures show where the signal is: the controlled task (the one task where the embedded
run's models score above 0) is in the code-generation figures, and a speedup of 0 (no correct
sample) is drawn as a zero (an 'x' on the axis line, labelled 0), never as a bar on a log axis."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from perfalign.evaluation.plots import plot_code_generation, plot_polybench  # noqa: E402
from perfalign.evaluation.records import EvalReport, PromptScore, TaskScore  # noqa: E402
from perfalign.evaluation.tasks.registry import TASK_LABELS  # noqa: E402


def _score(model: str, task: str, speedups: list[float]) -> TaskScore:
    per = [PromptScore(f"{task}-{i}", 2, 2 if s > 0 else 0, {"1": 1.0 if s > 0 else 0.0}, {"1": s}, 0.1,
                       [s, s], {"OK" if s > 0 else "WRONG_ANSWER": 2}) for i, s in enumerate(speedups)]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return TaskScore(model, task, "cpu", len(per), 2 * len(per), {"1": mean([p.pass_at["1"] for p in per])},
                     {"1": mean(speedups)}, {}, per)


def _report() -> EvalReport:
    scores = [_score("tiny", "codecontests", [0.0, 0.0]), _score("tiny", "controlled", [1.4, 0.9]),
              _score("tiny", "polybench", [0.0, 1.2, 0.8]),
              _score("control:reference", "codecontests", [1.0, 1.0]),
              _score("control:reference", "controlled", [1.0, 1.1]),
              _score("control:reference", "polybench", [1.0, 1.0, 1.0])]
    return EvalReport("now", {}, {}, {"ks": [1]}, [{"label": "tiny"}, {"label": "control:reference"}], scores)


def _figures(monkeypatch, plot, tmp_path) -> dict[str, Figure]:
    """The figures ``plot`` saves, keyed by file name (kept for their artists)."""
    saved: dict[str, Figure] = {}
    real = Figure.savefig

    def keep(fig, fname, *a, **kw):
        saved[str(fname).rsplit("/", 1)[-1]] = fig
        return real(fig, fname, *a, **kw)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot(_report(), tmp_path)
    return saved


def _zero_marks(ax) -> list[float]:
    """x positions of the 'x' markers on the axis line."""
    return [x for line in ax.get_lines() if line.get_marker() == "x" and line.get_linestyle() == "None"
            for x in line.get_xdata()]


def test_controlled_task_is_in_the_code_generation_figures(monkeypatch, tmp_path):
    figs = _figures(monkeypatch, plot_code_generation, tmp_path)
    assert set(figs) == {"fig_pass_at_1.png", "fig_speedup_at_1.png"}
    for fig in figs.values():
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert TASK_LABELS["controlled"] in labels and TASK_LABELS["codecontests"] in labels
    # the controlled task's bars carry its scores: tiny 1.15, the reference 1.05
    ax = figs["fig_speedup_at_1.png"].axes[0]
    heights = sorted(round(p.get_height(), 2) for p in ax.patches if isinstance(p, Rectangle) and p.get_height() > 0
                     and p.get_width() < 1)
    assert 1.15 in heights and 1.05 in heights


def test_a_zero_speedup_is_a_marked_zero_not_a_bar(monkeypatch, tmp_path):
    ax = _figures(monkeypatch, plot_code_generation, tmp_path)["fig_speedup_at_1.png"].axes[0]
    assert ax.get_yscale() == "log"
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() < 1]
    assert all(p.get_height() >= 0.5 for p in bars), [p.get_height() for p in bars]  # no bar stands in for 0
    zeros = _zero_marks(ax)
    assert len(zeros) == 1  # tiny on CodeContests
    cc = [t.get_text() for t in ax.get_xticklabels()].index(TASK_LABELS["codecontests"])
    assert abs(zeros[0] - cc) < 0.5
    mark = next(line for line in ax.get_lines() if line.get_marker() == "x")
    y_shown = mark.get_transform().transform([(zeros[0], 0.0)])[0][1]
    assert abs(y_shown - ax.transAxes.transform((0.0, 0.0))[1]) < 1e-6  # on the axis line whatever the scale
    assert "0" in [t.get_text() for t in ax.texts]
    assert "0: no correct sample" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_polybench_distribution_marks_incorrect_kernels_as_zero(monkeypatch, tmp_path):
    fig = _figures(monkeypatch, plot_polybench, tmp_path)["fig_polybench_at_1.png"]
    right = fig.axes[1]
    points = [y for c in right.collections for _, y in c.get_offsets()]
    assert points and min(points) >= 0.5  # the 0 is not a point at 0.01
    assert _zero_marks(right) == [1]  # tiny (x = 1) has one kernel at 0; the reference none
    assert "1 at 0" in right.get_xticklabels()[0].get_text()


def test_every_bar_keeps_its_value_label_even_the_tallest(monkeypatch, tmp_path):
    """A bar's label sits on top of its error bar; one whose error bar reaches above the axis was
    not drawn (matplotlib skips an annotation whose anchor lies outside the axes)."""
    from matplotlib.text import Annotation

    wide = EvalReport("now", {}, {}, {"ks": [1]}, [{"label": "tiny"}],
                      [_score("tiny", "controlled", [0.1, 5.0, 0.2]), _score("tiny", "codecontests", [1.0, 1.1])])
    saved: dict[str, Figure] = {}
    real = Figure.savefig

    def keep(fig, f, *a, **kw):
        saved[str(f)] = fig
        return real(fig, f, *a, **kw)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot_code_generation(wide, tmp_path)
    for name, fig in saved.items():
        ax = fig.axes[0]
        labels = [t for t in ax.texts if isinstance(t, Annotation)]
        assert len(labels) == 2, name
        lo, hi = ax.get_ylim()
        assert all(lo <= t.xy[1] <= hi for t in labels), (name, [t.xy for t in labels], (lo, hi))
