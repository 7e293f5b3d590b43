"""The model form's server pool (issue 17, point 2): more servers of the same model, one address
per line (or commas), built into the model's spec, shown in the list, and the planner still
fitting a 1366x768 screen."""

from __future__ import annotations

import pytest

from tests.ui.generation.test_planner import add_model, open_planner, wait_plan
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.ui.generation.model_form import ModelForm, describe


def test_more_servers_make_a_pool_and_come_back_when_edited(qtbot) -> None:
    form = ModelForm()
    qtbot.addWidget(form)
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText("qwen")
    form.base_url.setText("http://gpu1:8000/v1")
    form.more_base_urls.setPlainText("http://gpu2:8000/v1\n\n  http://gpu3:8000/v1, http://gpu4:8000/v1\n")
    spec = form.spec()
    assert spec.base_url == "http://gpu1:8000/v1"
    assert spec.more_base_urls == ("http://gpu2:8000/v1", "http://gpu3:8000/v1", "http://gpu4:8000/v1")
    assert "pool of 4 servers" in describe(spec)
    # Editing a model from the list fills the field again.
    form.set_spec(ModelSpec("openai", "m", base_url="http://a/v1"))
    assert form.more_base_urls.toPlainText() == "" and form.spec().more_base_urls == ()
    form.set_spec(spec)
    assert form.spec() == spec
    # Commas in the Base URL line itself work too.
    form.more_base_urls.setPlainText("")
    form.base_url.setText("http://gpu1:8000/v1, http://gpu2:8000/v1")
    assert form.spec().base_urls == ("http://gpu1:8000/v1", "http://gpu2:8000/v1")


def test_a_bad_or_repeated_address_is_named_and_other_providers_take_no_pool(qtbot) -> None:
    form = ModelForm()
    qtbot.addWidget(form)
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.base_url.setText("http://gpu1:8000/v1")
    form.more_base_urls.setPlainText("gpu2:8000/v1")
    with pytest.raises(RunSpecError, match="'gpu2:8000/v1'"):
        form.spec()
    form.more_base_urls.setPlainText("http://gpu1:8000/v1/")
    with pytest.raises(RunSpecError, match="named twice"):
        form.spec()
    form.provider.setCurrentIndex(form.provider.findData("anthropic"))
    assert not form.more_base_urls.isEnabled()
    assert form.spec().more_base_urls == ()  # the field is for OpenAI-compatible servers only


def test_a_pool_model_plans_and_the_planner_fits_the_screen(generation, qtbot, tmp_path) -> None:
    planner = open_planner(generation, qtbot)
    planner.models.form.more_base_urls.setPlainText("http://127.0.0.1:10/v1")
    add_model(planner, base_url="http://127.0.0.1:9/v1")
    plan = wait_plan(qtbot, planner)
    assert plan.spec.models[0].base_urls == ("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1")
    assert "pool of 2 servers" in planner.models.list.item(0).text()
    planner.tabs.setCurrentIndex(1)  # Models
    planner.show()
    planner.resize(1366 - 40, 768 - 60)
    qtbot.wait(50)
    assert planner.width() <= 1366 and planner.height() <= 768
    planner.grab().save(str(tmp_path / "planner-pool.png"))
