"""Audio in and out of the model.

``vocoder`` (codes to audio, the Higgs decoder), ``postprocess`` (upstream's silence
trimming, loudness, fades and cross-fades), ``reference`` (a cloned voice's recording to its
prompt), ``voice_prompt`` (the prompt a voice gives a request).
"""
