"""Voice-clone reference encoding: audio file -> `VoicePrompt` (codes, transcript, RMS; the value
and its file format: :mod:`.voice_prompt`).

Follows upstream `OmniVoice.create_voice_clone_prompt` (omnivoice.md B.7): mono, 24 kHz,
RMS boost below 0.1 (the original RMS is kept for output loudness), pydub-style silence
trimming, a cut to a whole number of 960-sample frames, transcript punctuation, then the
three Higgs encoder graphs (A.3) give codes ``[8, T_ref]``. Resampling uses soxr (a
band-limited resampler) where upstream uses torchaudio's sinc resampler.

Deviations from upstream, on purpose: a transcript is required (we ship no ASR model), a
reference that is silent or has less than 1 s of sound is refused, a reference longer
than 20 s is kept whole with a warning (upstream trims only audio it transcribes itself;
cutting audio whose transcript the user wrote would make the two disagree), and one longer
than :data:`MAX_SECONDS` is refused from its file header, before it is decoded.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.audio.voice_prompt import VoicePrompt
from wyoming_omnivoice.engine.constants import (
    HOP_LENGTH,
    NUM_CODEBOOKS,
    SAMPLE_RATE,
    SEMANTIC_SAMPLE_RATE,
)
from wyoming_omnivoice.engine.store.model_files import (
    ACOUSTIC_ENCODER,
    QUANTIZER_ENCODER,
    SEMANTIC_ENCODER,
    ModelError,
)
from wyoming_omnivoice.user_files import AUDIO_LIMIT, UserFileError, open_user_file

_LOGGER = logging.getLogger(__name__)

#: Below this RMS the reference is boosted to it (upstream).
RMS_TARGET = 0.1
#: Shortest reference (seconds of sound after silence trimming) we accept.
MIN_SECONDS = 1.0
#: Longer references work but are slow and clone worse: warn (upstream).
LONG_SECONDS = 20.0
#: Longer references are refused (checked from the file's header, before decoding): every
#: request carries the reference's frames in its prompt, so a reference of minutes makes
#: each reply slow and, beyond the backbone's positions, impossible.
MAX_SECONDS = 60.0
#: A reference whose peak stays below this (-60 dBFS) holds no usable sound.
SILENCE_PEAK = 10 ** (-60 / 20)
#: Upstream's silence trimming of references, in ms.
MID_SILENCE_MS, LEAD_SILENCE_MS, TRAIL_SILENCE_MS = 200, 100, 200
NO_TRANSCRIPT_HINT = (
    "A cloned voice needs the exact words spoken in the recording: wyoming-omnivoice ships "
    "no speech recognition model to transcribe it."
)

# ---------------------------------------------------------------------------------------
# Audio loading and preparation (numpy only)
# ---------------------------------------------------------------------------------------


def load_reference_audio(path: str | Path) -> tuple[np.ndarray, int]:
    """Read a WAV/FLAC/OGG file (any rate, 16/24-bit, float, stereo) as mono float32.

    Raises ValueError naming the file when it is missing, unreadable or empty.
    """
    import soundfile

    path = Path(path)
    try:
        handle = open_user_file(path, limit=AUDIO_LIMIT)
    except FileNotFoundError:
        raise ValueError(f"Reference audio {path} does not exist.") from None
    except UserFileError as err:
        raise ValueError(f"Reference audio {err}") from None
    with handle:
        try:
            # The length from the header first: a recording far too long to ever speak is
            # refused before it is decoded (an 18-minute one took 2.65 GB to encode).
            seconds = soundfile.info(handle).duration
            if seconds > MAX_SECONDS:
                raise ValueError(
                    f"Reference audio {path} is {seconds / 60:.1f} minutes long; at most "
                    f"{MAX_SECONDS:g} s can be used (3-10 s is recommended): cut a short "
                    "passage and write its exact words into the transcript.")
            handle.seek(0)
            data, sample_rate = soundfile.read(handle, dtype="float32", always_2d=True)
        except ValueError as err:
            if str(err).startswith("Reference audio"):
                raise
            raise _unreadable(path, err) from err
        except Exception as err:  # soundfile raises LibsndfileError/RuntimeError/TypeError
            raise _unreadable(path, err) from err
    if data.shape[0] == 0:
        raise ValueError(f"Reference audio {path} holds no samples.")
    return data.mean(axis=1, dtype=np.float32), int(sample_rate)


def _unreadable(path: Path, err: Exception) -> ValueError:
    return ValueError(f"Reference audio {path} is unreadable or in an unsupported format "
                      f"({err}). Use a WAV, FLAC or OGG file.")


def _to_mono_float(wav: Any) -> np.ndarray:
    audio = np.asarray(wav)
    if np.issubdtype(audio.dtype, np.integer):
        scale = float(2 ** (8 * audio.dtype.itemsize - 1))
        audio = audio.astype(np.float32) / np.float32(scale)
    audio = audio.astype(np.float32, copy=False)
    if audio.ndim == 2:
        # (channels, samples) as upstream, or (samples, channels) as soundfile returns
        channel_axis = 0 if audio.shape[0] <= audio.shape[1] else 1
        audio = audio.mean(axis=channel_axis, dtype=np.float32)
    elif audio.ndim != 1:
        raise ValueError(f"expected mono or multi-channel audio, got shape {audio.shape}")
    return audio


def resample(audio: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Band-limited resampling with soxr (float32 in, float32 out)."""
    if from_rate == to_rate:
        return np.asarray(audio, dtype=np.float32)
    import soxr

    resampled: np.ndarray = soxr.resample(np.asarray(audio, dtype=np.float32), from_rate,
                                          to_rate, quality="HQ")
    return resampled.astype(np.float32, copy=False)


@dataclass(frozen=True)
class PreparedReference:
    """A reference ready for the encoder graphs."""

    wav_24k: np.ndarray  # float32, length a multiple of 960
    wav_16k: np.ndarray  # float32, the same audio at 16 kHz
    text: str  # transcript with end punctuation
    rms: float  # RMS of the 24 kHz audio before any boost


def prepare_reference(
    wav: Any, sample_rate: int, ref_text: str | None, *, source: str = "Reference audio"
) -> PreparedReference:
    """Upstream's reference preprocessing (B.7 steps 1-4, 6, 8), with clear errors.

    ``wav`` is mono, ``(channels, samples)`` or ``(samples, channels)``, float or integer
    PCM. ``source`` names the audio (a file path) in error messages.
    """
    from wyoming_omnivoice.engine.audio.postprocess import remove_silence
    from wyoming_omnivoice.engine.prompt.text_rules import add_punctuation

    if ref_text is None or not ref_text.strip():
        raise ValueError(f"{source} has no transcript. {NO_TRANSCRIPT_HINT}")
    if not isinstance(sample_rate, int | np.integer) or sample_rate <= 0:
        raise ValueError(f"{source}: sample rate must be a positive integer, not {sample_rate}")
    audio = _to_mono_float(wav)
    if audio.size == 0:
        raise ValueError(f"{source} holds no samples.")
    if not np.all(np.isfinite(audio)):
        raise ValueError(f"{source} contains NaN or infinite samples.")
    audio = resample(audio, int(sample_rate), SAMPLE_RATE)

    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
    if not audio.size or float(np.max(np.abs(audio))) < SILENCE_PEAK:
        raise ValueError(f"{source} contains only silence. Record the voice speaking 3-10 s.")
    if 0 < rms < RMS_TARGET:
        audio = audio * np.float32(RMS_TARGET / rms)

    audio = remove_silence(audio, SAMPLE_RATE, MID_SILENCE_MS, LEAD_SILENCE_MS,
                           TRAIL_SILENCE_MS)
    if audio.size == 0:
        raise ValueError(f"{source} contains only silence. Record the voice speaking 3-10 s.")
    seconds = audio.size / SAMPLE_RATE
    if seconds < MIN_SECONDS:
        raise ValueError(
            f"{source} is too short: {seconds:.2f} s of sound after trimming silence; "
            f"at least {MIN_SECONDS:g} s is needed (3-10 s recommended)."
        )
    if seconds > MAX_SECONDS:
        raise ValueError(
            f"{source} is {seconds:.1f} s long (after trimming silence); at most "
            f"{MAX_SECONDS:g} s can be used (3-10 s is recommended): cut a short passage "
            "and write its exact words into the transcript.")
    if seconds > LONG_SECONDS:
        _LOGGER.warning(
            "%s is %.1f s long (more than %g s): cloning is slower and usually worse; "
            "3-10 s is recommended. It is used whole because its transcript must match.",
            source, seconds, LONG_SECONDS,
        )
    audio = np.ascontiguousarray(audio[: audio.size - audio.size % HOP_LENGTH], np.float32)
    wav_16k = resample(audio, SAMPLE_RATE, SEMANTIC_SAMPLE_RATE)
    return PreparedReference(audio, wav_16k, add_punctuation(ref_text), rms)


# ---------------------------------------------------------------------------------------
# The encoder graphs
# ---------------------------------------------------------------------------------------


def encoder_fingerprint(model_dir: str | Path) -> str:
    """A short id of the three encoder graphs (name, size, first MiB), for cache keys."""
    root = Path(model_dir)
    digest = hashlib.sha256()
    for name in (ACOUSTIC_ENCODER, SEMANTIC_ENCODER, QUANTIZER_ENCODER):
        path = root / name
        digest.update(name.encode())
        if path.is_file():
            digest.update(str(path.stat().st_size).encode())
            with path.open("rb") as handle:
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


class ReferenceEncoder:
    """Runs the acoustic, semantic and quantizer encoder graphs of ``model_dir``.

    The graphs are loaded on the first `encode`, so a server without cloned voices never
    needs them. ``providers`` is a `sessions.ProviderChoice`, a device name ("auto",
    "cuda", "cpu") or None (CPU).
    """

    def __init__(
        self, model_dir: str | Path, providers: Any = None, *, threads: int | None = None
    ) -> None:
        self.model_dir = Path(model_dir)
        self._providers = providers
        self._threads = threads
        self._graphs: tuple[Any, Any, Any] | None = None

    @property
    def fingerprint(self) -> str:
        return encoder_fingerprint(self.model_dir)

    def _load(self) -> tuple[Any, Any, Any]:
        if self._graphs is not None:
            return self._graphs
        from wyoming_omnivoice.engine.runtime.onnx_sessions import (
            Graph,
            ProviderChoice,
            choose_providers,
        )

        missing = [n for n in (ACOUSTIC_ENCODER, SEMANTIC_ENCODER, QUANTIZER_ENCODER)
                   if not (self.model_dir / n).is_file()]
        if missing:
            raise ModelError(
                f"Voice cloning needs {', '.join(missing)} in {self.model_dir}. Run the server "
                "with --data-dir so it downloads the cloning graphs, or copy them from "
                "onnx-community/OmniVoice-Onnx (audio_tokenizer/) into the model directory."
            )
        providers = self._providers
        if not isinstance(providers, ProviderChoice):
            providers = choose_providers(providers or "cpu")
        acoustic = Graph(self.model_dir / ACOUSTIC_ENCODER, providers, threads=self._threads)
        acoustic.require(["waveform_24k"], ["acoustic_features"], exact=True)
        semantic = Graph(self.model_dir / SEMANTIC_ENCODER, providers, threads=self._threads)
        semantic.require(["waveform_16k"], ["semantic_features"], exact=True)
        quantizer = Graph(self.model_dir / QUANTIZER_ENCODER, providers, threads=self._threads)
        quantizer.require(["acoustic_features", "semantic_features"], ["codes"], exact=True)
        self._graphs = (acoustic, semantic, quantizer)
        _LOGGER.info("Loaded the voice-cloning encoder graphs from %s", self.model_dir)
        return self._graphs

    def encode_prepared(self, prepared: PreparedReference) -> VoicePrompt:
        """Codes ``[8, T]`` for already prepared audio."""
        acoustic, semantic, quantizer = self._load()
        (acoustic_features,) = acoustic.run(
            {"waveform_24k": prepared.wav_24k[None, None, :]}, ["acoustic_features"]
        )
        (semantic_features,) = semantic.run(
            {"waveform_16k": prepared.wav_16k[None, :]}, ["semantic_features"]
        )
        frames = min(acoustic_features.shape[-1], semantic_features.shape[-1])
        if frames < 1:
            raise ValueError("reference audio is too short for the encoder")
        (codes,) = quantizer.run(
            {
                "acoustic_features": np.ascontiguousarray(acoustic_features[..., :frames]),
                "semantic_features": np.ascontiguousarray(semantic_features[..., :frames]),
            },
            ["codes"],
        )
        codes = np.asarray(codes)
        if codes.ndim != 3 or codes.shape[0] != NUM_CODEBOOKS or codes.shape[1] != 1:
            raise ModelError(
                f"{self.model_dir / QUANTIZER_ENCODER} returned codes of shape "
                f"{list(codes.shape)}, expected [8, 1, T]."
            )
        return VoicePrompt(codes=codes[:, 0, :].astype(np.int64), text=prepared.text,
                           rms=prepared.rms)

    def encode(
        self, wav: Any, sample_rate: int, ref_text: str | None, *, source: str | None = None
    ) -> VoicePrompt:
        """Reference audio + transcript -> `VoicePrompt` (see `prepare_reference`)."""
        prepared = prepare_reference(wav, sample_rate, ref_text,
                                     source=source or "Reference audio")
        return self.encode_prepared(prepared)

    def encode_file(self, path: str | Path, ref_text: str | None) -> VoicePrompt:
        """Load ``path`` with soundfile and encode it; errors name the file."""
        wav, sample_rate = load_reference_audio(path)
        return self.encode(wav, sample_rate, ref_text, source=f"Reference audio {path}")


def encode_reference(
    wav: Any, sample_rate: int, ref_text: str | None, *, model_dir: str | Path,
    providers: Any = None,
) -> VoicePrompt:
    """One-off encoding with a fresh `ReferenceEncoder` (loads the graphs each call)."""
    return ReferenceEncoder(model_dir, providers).encode(wav, sample_rate, ref_text)
