"""Adding the server through Home Assistant's own config flow."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from conftest import HomeAssistantWithServer


async def test_config_flow_creates_a_loaded_entry_and_a_tts_entity(
        ha: HomeAssistantWithServer) -> None:
    hass: HomeAssistant = ha.hass
    entry = hass.config_entries.async_get_entry(ha.entry_id)
    assert entry is not None
    assert entry.title == "omnivoice"
    assert entry.data == {"host": "127.0.0.1", "port": ha.server.port}
    assert entry.state is ConfigEntryState.LOADED
    state = hass.states.get(ha.entity_id)
    assert state is not None
    assert ha.entity_id.startswith("tts.")
