"""When Spot pays: the saving as a share, and the preemptions a run can take before it is gone."""

import pytest

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.errors import SpecError
from gkeml_sdk.pricing.breakeven import break_even


def test_break_even_by_hand():
    b = break_even(10.0, 3.0, hours=24, checkpoint_minutes=30, preemptions_per_day=1)
    assert b.saving == pytest.approx(0.7)
    assert b.limit == pytest.approx(10 / 3 - 1)
    assert b.lost_minutes == 25  # half a 30-minute interval plus a 10-minute restart
    assert b.overhead == pytest.approx(25 / 1440)
    assert b.max_preemptions == int((10 / 3 - 1) * 24 * 60 / 25) == 134
    assert b.pays


def test_spot_does_not_pay_when_preemptions_eat_the_saving():
    b = break_even(10.0, 9.0, hours=10, checkpoint_minutes=60, preemptions_per_day=48)
    assert b.overhead == pytest.approx(48 * 40 / 1440) and b.limit == pytest.approx(1 / 9)
    assert not b.pays and "Spot does not pay" in str(b)


def test_the_estimate_shows_the_saving_and_the_break_even_from_the_job_inputs():
    job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("h100", count=8))
    cost = job.estimate_cost(hours=100, checkpoint_minutes=60, preemptions_per_day=4)
    od, spot = cost.total("on-demand"), cost.total("spot")
    assert cost.spot_saving == pytest.approx(1 - spot / od)
    even = cost.break_even
    assert even is not None and even.lost_minutes == 40 and even.preemptions_per_day == 4
    assert even.limit == pytest.approx(od / spot - 1)
    text = str(cost)
    assert f"Spot saves {cost.spot_saving:.0%} of on-demand" in text
    assert "checkpoint every 60 min" in text and f"{even.max_preemptions} preemptions" in text


def test_no_break_even_without_an_on_demand_price():
    one = TrainingJob(name="a", command=["x"], accelerator=Accelerator("h100"), spot=True)
    cost = one.estimate_cost()
    assert cost.break_even is None and cost.spot_saving is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("checkpoint_minutes", 0),
        ("checkpoint_minutes", float("nan")),
        ("preemptions_per_day", -1),
        ("restart_minutes", True),
        ("restart_minutes", 10**400),
    ],
)
def test_bad_inputs_name_the_field(field, value):
    job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"))
    with pytest.raises(SpecError, match=field):
        job.estimate_cost(**{field: value})
