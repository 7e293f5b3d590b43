""" "Test connection": success, a refused key and a refused port, against real 127.0.0.1 sockets."""

from __future__ import annotations

from thoughtdesk.core.generation.backends.connection_check import check_anthropic, check_openai_compatible
from thoughtdesk.core.settings import network
from thoughtdesk.ui.settings.options import AppSettings
from thoughtdesk.ui.settings.provider_forms import ProvidersForm


def _form(qtbot, base_url: str) -> ProvidersForm:
    form = ProvidersForm()
    qtbot.addWidget(form)
    form.load(AppSettings(openai_base_url=base_url, anthropic_base_url=base_url.removesuffix("/v1")))
    form.show()
    return form


def test_success_is_reported_without_blocking_the_gui(qtbot, models_server):
    form = _form(qtbot, models_server)
    panel = form.openai
    panel.key.setText("sk-local-test-key-123")
    with qtbot.waitSignal(panel.tested, timeout=10000) as blocker:
        panel.test_connection()
        # The check runs in the thread pool: the button is disabled meanwhile, the GUI runs on.
        assert not panel.test_button.isEnabled()
        assert panel.result.text() == "Testing…"
    result = blocker.args[0]
    assert result.ok and result.models == ("local-model-a", "local-model-b")
    assert panel.result.text().startswith(f"Connected to OpenAI-compatible server at {models_server}/models (HTTP 200)")
    qtbot.waitUntil(panel.test_button.isEnabled)


def test_wrong_key_is_reported_with_the_servers_words(qtbot, models_server):
    form = _form(qtbot, models_server)
    panel = form.openai
    panel.key.setText("sk-wrong")
    with qtbot.waitSignal(panel.tested, timeout=10000) as blocker:
        panel.test_connection()
    assert not blocker.args[0].ok
    assert panel.result.text() == (
        f"Failed: the API key was refused by {models_server}/models (HTTP 401): Incorrect API key provided"
    )


def test_refused_port_gives_the_exact_failure(qtbot, refused_port):
    url = f"http://127.0.0.1:{refused_port}/v1"
    form = _form(qtbot, url)
    panel = form.openai
    with qtbot.waitSignal(panel.tested, timeout=10000):
        panel.test_connection()
    assert panel.result.text() == (f"Failed: cannot connect to {url}/models: [Errno 111] Connection refused")


def test_anthropic_panel_sends_x_api_key(qtbot, models_server):
    form = _form(qtbot, models_server)
    panel = form.anthropic
    panel.key.setText("sk-local-test-key-123")
    with qtbot.waitSignal(panel.tested, timeout=10000) as blocker:
        panel.test_connection()
    assert blocker.args[0].ok, panel.result.text()
    assert check_anthropic(None).message == "no Anthropic API key: paste the key first"


def test_stored_key_is_used_when_none_is_typed(qtbot, models_server):
    from thoughtdesk.core.settings.config import store_api_key

    store_api_key("openai", "sk-local-test-key-123", models_server)
    form = _form(qtbot, models_server)
    assert form.openai.key.placeholderText() == "stored: ••••-123"
    with qtbot.waitSignal(form.openai.tested, timeout=10000) as blocker:
        form.openai.test_connection()
    assert blocker.args[0].ok


def test_offline_mode_refuses_a_remote_test_but_not_a_loopback_one(models_server):
    network.set_offline(True)
    before = len(network.refused_attempts)
    remote = check_openai_compatible("https://api.openai.com/v1", "sk-x")
    assert not remote.ok
    assert remote.message.startswith(
        "offline mode is on: testing the connection to "
        "OpenAI-compatible server needs the network (https://api.openai.com/v1/models)"
    )
    assert len(network.refused_attempts) == before  # said so instead of trying
    assert check_openai_compatible(models_server, "sk-local-test-key-123").ok


def test_bad_address_is_named():
    result = check_openai_compatible("ftp://example.org/v1", None)
    assert not result.ok and "is not an http:// or https:// address" in result.message


def test_a_stored_key_is_not_sent_to_another_address(qtbot, models_server):
    from thoughtdesk.core.settings.config import store_api_key

    store_api_key("openai", "sk-local-test-key-123", "https://api.openai.com/v1")
    form = _form(qtbot, models_server)
    assert form.openai.stored_key() is None  # saved for api.openai.com, the form names 127.0.0.1
    with qtbot.waitSignal(form.openai.tested, timeout=10000) as blocker:
        form.openai.test_connection()
    assert not blocker.args[0].ok  # the server wants a key; the OpenAI one was not offered


def test_a_redirect_is_reported_and_the_key_is_not_sent_on(models_server):
    from tests.helpers.app_state import ModelListHandler

    ModelListHandler.seen.clear()
    moved = models_server.replace("/v1", "/moved")
    result = check_anthropic("sk-local-test-key-123", base_url=moved)
    assert not result.ok
    assert "redirects to /v1/models" in result.message and "no key was sent there" in result.message
    assert [path for path, _key in ModelListHandler.seen] == ["/moved/v1/models"]  # not followed


def test_an_address_with_user_and_password_is_refused_and_nothing_is_sent(qtbot, models_server):
    """httpx sent ``user:pass@`` of a base URL as Basic auth; model calls refuse such addresses
    (they are stored with every run), and Test connection and the form now say the same."""
    from tests.helpers.app_state import ModelListHandler
    from thoughtdesk.core.generation.backends.connection_check import look_up_model

    ModelListHandler.seen.clear()
    with_password = models_server.replace("http://", "http://alice:s3cret-pw@")
    plain = models_server
    result = check_openai_compatible(with_password, "sk-local-test-key-123")
    assert not result.ok and "s3cret-pw" not in result.message
    assert result.message.startswith(f"the base URL {plain} carries a user name or password (user:pass@)")
    anthropic = check_anthropic("sk-local-test-key-123", base_url=with_password.removesuffix("/v1"))
    assert not anthropic.ok and "carries a user name or password" in anthropic.message
    assert look_up_model("openai", with_password, "sk-local-test-key-123", "local-model-a").known is None
    assert ModelListHandler.seen == []  # no request went out

    form = _form(qtbot, with_password)
    panel = form.openai
    assert panel.address_note.isVisible() and "user:pass@" in panel.address_note.text()
    assert "user name or password (user:pass@)" in panel.address_note.toolTip()
    # one line that the form shows whole (a wrapped note was cut to its first line)
    note = panel.address_note
    assert note.fontMetrics().horizontalAdvance(note.text()) <= note.width()
    panel.key.setText("sk-local-test-key-123")
    with qtbot.waitSignal(panel.tested, timeout=10000) as blocker:
        panel.test_connection()
    assert not blocker.args[0].ok and panel.result.text().startswith(f"Failed: the base URL {plain} carries")
    assert "s3cret-pw" not in panel.result.text() and ModelListHandler.seen == []
    panel.base_url.setText(plain)  # fixed: the note goes, the test connects
    assert not panel.address_note.isVisible()
    with qtbot.waitSignal(panel.tested, timeout=10000) as blocker:
        panel.test_connection()
    assert blocker.args[0].ok
