"""The paper's equations (alignment/equations.py) against hand computations."""
from __future__ import annotations

import math

import pytest
import torch

from perfalign.common import equations as eq
from perfalign.common.prompts import extract_code, format_response, instruction_prompt, optimization_prompt


def test_eq1_perplexity():
    # two tokens with p = 0.5 and p = 0.25: exp(-(ln .5 + ln .25) / 2) = sqrt(8)
    assert eq.perplexity([math.log(0.5), math.log(0.25)]) == pytest.approx(math.sqrt(8))
    assert eq.perplexity(torch.zeros(5)) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        eq.perplexity([])


def test_eq2_reward_model_loss():
    r_f, r_s, mu = torch.tensor([2.0, 0.5]), torch.tensor([1.0, 1.0]), torch.tensor([0.5, 0.0])
    want = (-math.log(1 / (1 + math.exp(-(2 - 1 - 0.5)))) - math.log(1 / (1 + math.exp(-(0.5 - 1 - 0))))) / 2
    assert float(eq.reward_model_loss(r_f, r_s, mu)) == pytest.approx(want)


def test_eq3_adaptive_margin():
    assert eq.adaptive_margin(1.0, 2.5, is_contest=True) == 2.5
    assert eq.adaptive_margin(1.0, 10.0, is_contest=True) == 3.0            # clipped at lambda
    assert eq.adaptive_margin(1.0, 10.0, is_contest=True, max_margin=5) == 5.0
    assert eq.adaptive_margin(1.0, 10.0, is_contest=False) == 0.0           # synthetic: 0
    assert eq.adaptive_margin(1.0, None, is_contest=True, slow_is_correct=False) == 3.0  # incorrect d_s: lambda
    assert eq.adaptive_margin(0.0, 0.01, is_contest=True) == 3.0            # no division by zero
    with pytest.raises(ValueError):
        eq.adaptive_margin(None, 1.0, is_contest=True)


def test_eq4_performance_reward():
    assert eq.performance_reward(has_tests=True, correct=False) == -1.0
    assert eq.performance_reward(has_tests=True, correct=True, runtime_s=0.5,
                                 median_runtime_s=1.0) == pytest.approx(1.0)
    assert eq.performance_reward(has_tests=True, correct=True, runtime_s=2.0,
                                 median_runtime_s=1.0) == pytest.approx(-0.5)
    assert eq.performance_reward(has_tests=False, reward_model_score=0.37) == pytest.approx(0.37)
    with pytest.raises(ValueError):
        eq.performance_reward(has_tests=False)


def test_eq5_reward_accuracy():
    assert eq.reward_accuracy([1.0, 2.0, 0.0, 5.0], [0.0, 3.0, 0.0, 1.0]) == 0.5  # ties do not count


def test_eq6_objective():
    assert eq.kl_penalized_objective([1.0, 3.0], [0.2, 0.6], 0.1) == pytest.approx(2.0 - 0.04)


def test_eq7_dpa_loss_hand_computed():
    # chosen log-ratio 1, rejected -0.5, beta 0.6, mu 1: -log sigma(0.6*1.5 - 1) = log(1 + e^0.1)
    loss = eq.dpa_loss(torch.tensor([-10.0]), torch.tensor([-12.0]), torch.tensor([-11.0]), torch.tensor([-11.5]),
                       torch.tensor([1.0]), beta=0.6)
    assert float(loss) == pytest.approx(math.log(1 + math.exp(0.1)))
    # mu = 0 is plain DPO
    plain = eq.dpa_loss(torch.tensor([-10.0]), torch.tensor([-12.0]), torch.tensor([-11.0]), torch.tensor([-11.5]),
                        0.0, 0.6)
    assert float(plain) == pytest.approx(math.log(1 + math.exp(-0.9)))


def test_eq8_dpa_accuracy():
    acc = eq.dpa_accuracy(torch.tensor([-1.0, -5.0]), torch.tensor([-2.0, -1.0]),
                          torch.tensor([-1.5, -5.0]), torch.tensor([-1.0, -2.0]))
    # pair 1: +0.5 > -1 -> yes; pair 2: 0 > +1 -> no
    assert acc == 0.5




def test_listing1_prompts_and_code_extraction():
    p = instruction_prompt("  Add two numbers. ", "cpp")
    assert p == "### Instruction:\nAdd two numbers.\n\nWrite a solution in C++.\n\n### Response:\n"
    o = optimization_prompt("Add.", "python3", "print(sum(map(int, input().split())))")
    assert "```python\nprint(sum(map(int, input().split())))\n```" in o and o.endswith("### Response:\n")
    r = format_response("int main(){}", "cpp")
    assert r == "```cpp\nint main(){}\n```"
    assert extract_code(r + "\nsome chatter") == ("int main(){}", "cpp")
    assert extract_code("```python\nprint(1)") == ("print(1)", "python3")  # cut off by max length
    assert extract_code("no code here") == (None, None)
    assert extract_code("```\nx = 1\n```") == ("x = 1", None)
    with pytest.raises(ValueError):
        instruction_prompt("x", "rust")
