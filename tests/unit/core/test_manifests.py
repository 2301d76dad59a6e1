"""Manifests are byte-identical whether PyYAML writes them with libyaml or in pure Python."""

import pytest
import yaml

from gkeml_sdk import TrainingJob
from gkeml_sdk.core.manifests import dump_yaml
from tests.bench.bench_core import varied_jobs
from tests.unit.serving.test_golden import SERVICES
from tests.unit.training.test_golden import JOBS


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml: one emitter only")
def test_libyaml_and_pure_python_emitters_agree():
    code = TrainingJob.from_code("def f():\n    return 1  \n\nprint('x')\n", name="c", image="i")
    specs = [*varied_jobs(300), *JOBS.values(), *SERVICES.values(), code]
    for spec in specs:
        objects = spec.compile().objects
        assert dump_yaml(objects, native=True) == dump_yaml(objects, native=False), spec.name
