"""Ranking losses prefer the true order."""

from __future__ import annotations

import torch

from tvm_tgraph.losses import listmle_loss, pairwise_hinge_loss, weighted_hinge_loss

RUNTIME = torch.tensor([3.0, 1.0, 2.0, 4.0])
RIGHT = torch.tensor([2.0, 4.0, 3.0, 1.0])   # fastest scores highest
WRONG = -RIGHT


def test_hinge_is_zero_when_every_pair_is_ordered_by_the_margin():
    assert float(pairwise_hinge_loss(RIGHT, RUNTIME, margin=0.5)) == 0.0
    assert float(pairwise_hinge_loss(WRONG, RUNTIME, margin=0.5)) > 1.0


def test_hinge_ignores_ties_and_has_a_gradient():
    scores = torch.zeros(3, requires_grad=True)
    tied = pairwise_hinge_loss(scores, torch.ones(3))
    assert float(tied.detach()) == 0.0
    loss = pairwise_hinge_loss(scores, torch.tensor([1.0, 2.0, 3.0]))
    loss.backward()
    assert scores.grad[0] < 0 < scores.grad[2]   # raise the fastest, lower the slowest


def test_listmle_prefers_the_true_order():
    assert float(listmle_loss(RIGHT, RUNTIME)) < float(listmle_loss(WRONG, RUNTIME))
    assert float(listmle_loss(RIGHT * 10, RUNTIME)) < float(listmle_loss(RIGHT, RUNTIME))


def test_weighted_hinge_prefers_the_true_order_and_ignores_ties():
    assert float(weighted_hinge_loss(RIGHT, RUNTIME, margin=0.5)) == 0.0
    assert float(weighted_hinge_loss(WRONG, RUNTIME, margin=0.5)) > 1.0
    assert float(weighted_hinge_loss(torch.zeros(3), torch.ones(3))) == 0.0


def test_weighted_hinge_counts_pairs_within_noise_less_than_pairs_far_apart():
    runtime = torch.tensor([1.0, 1.01, 4.0])      # 0 and 1 within noise; 2 far slower
    near_wrong = torch.tensor([0.0, 1.0, -1.0])   # only the near pair is misordered
    far_wrong = torch.tensor([0.0, 1.0, 2.0])     # the far pairs are misordered
    assert float(weighted_hinge_loss(near_wrong, runtime)) < 0.1 * float(pairwise_hinge_loss(near_wrong, runtime))
    assert float(weighted_hinge_loss(far_wrong, runtime)) > float(weighted_hinge_loss(near_wrong, runtime))
