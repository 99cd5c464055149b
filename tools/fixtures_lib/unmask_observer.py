"""Watch upstream's ``_generate_iterative`` from outside and record what each step unmasked.

Nothing in upstream is edited or re-implemented: a forward pre-hook on the model reads the
batch ``input_ids`` that the decode loop feeds at every step, and a wrapper around the
model's bound ``_generate_iterative`` reads the codes it returns. For each item (conditional
row ``i`` of the ``2B`` batch rows) the MASK cells left inside its audio span are counted
before every forward and in the returned codes; the drop from one count to the next is the
number of cells that step unmasked. These are upstream's per-step unmask counts as they
happened, independent of how its schedule is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ObservedRun:
    """One ``_generate_iterative`` call: its items and what each step unmasked."""

    texts: list[str]
    ref_texts: list[str | None]
    target_lens: list[int]
    #: ``counts[i][s]``: cells of item ``i`` unmasked by step ``s``.
    counts: list[list[int]]
    #: Returned codes per item, ``[8][T_i]`` lists.
    codes: list[list[list[int]]]
    #: Row 0 of each item's conditional prompt as first fed (ids up to its length).
    prompt_ids: list[list[int]]
    #: Each item's first audio position (reference codes or targets).
    audio_starts: list[int]
    #: Forward passes seen (equals ``num_step``).
    forwards: int


@dataclass
class UnmaskObserver:
    """Context manager: ``with UnmaskObserver(model) as seen: model.generate(...)``."""

    model: Any
    runs: list[ObservedRun] = field(default_factory=list)
    _masked: list[list[int]] | None = None
    _prompts: list[tuple[list[int], int]] = field(default_factory=list)
    _handle: Any = None

    def __enter__(self) -> UnmaskObserver:
        mask_id = int(self.model.config.audio_mask_id)
        original = self.model._generate_iterative  # bound method of the class

        def before_forward(_module: Any, _args: tuple, kwargs: dict) -> None:
            if self._masked is None:
                return
            ids = kwargs["input_ids"]
            audio = kwargs["audio_mask"]
            rows = ids.shape[0] // 2  # conditional rows first, then the unconditional ones
            if not self._masked:
                self._prompts = []
                for row in range(rows):
                    audio_positions = audio[row].nonzero().flatten()
                    end = int(audio_positions.max()) + 1  # padding follows the prompt
                    self._prompts.append((ids[row, 0, :end].tolist(),
                                          int(audio_positions.min())))
            left = ((ids[:rows] == mask_id) & audio[:rows, None, :]).sum(dim=(1, 2))
            self._masked.append([int(v) for v in left])

        def generate_iterative(task: Any, gen_config: Any) -> list:
            self._masked = []
            try:
                result = original(task, gen_config)
            finally:
                steps, self._masked = self._masked, None
            steps.append([int((codes == mask_id).sum()) for codes in result])
            counts = [
                [steps[s][i] - steps[s + 1][i] for s in range(len(steps) - 1)]
                for i in range(len(result))
            ]
            self.runs.append(ObservedRun(
                texts=list(task.texts),
                ref_texts=list(task.ref_texts),
                target_lens=[int(t) for t in task.target_lens],
                counts=counts,
                codes=[codes.tolist() for codes in result],
                forwards=len(steps) - 1,
                prompt_ids=[ids for ids, _ in self._prompts],
                audio_starts=[start for _, start in self._prompts],
            ))
            return result

        self._handle = self.model.register_forward_pre_hook(before_forward, with_kwargs=True)
        self.model._generate_iterative = generate_iterative
        return self

    def __exit__(self, *_exc: object) -> None:
        self._handle.remove()
        del self.model._generate_iterative  # the class method shows through again
