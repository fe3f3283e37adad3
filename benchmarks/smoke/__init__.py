"""A tiny generated benchmark that exercises the whole pipeline in seconds, on any profile.

Each episode holds a few objects, each observed once and then moved once (the ALFWorld-Revision
templates of Appendix B.2 with L=1); each question asks where an object is now. A small local
model answers these from a long-context read, so the smoke run checks real answers end to end.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from benchmarks.runner.types import Episode, Event, Question

OBJECTS = ["mug", "key", "apple", "book", "spoon", "towel", "candle", "pencil", "vase", "watch"]
PLACES = ["drawer", "shelf", "cabinet", "fridge", "sink", "desk", "sofa", "bed", "box", "table"]

ANSWER_PROMPT = (
    "You are given notes from an agent's memory, oldest first.\n\n"
    "Notes:\n{context}\n\n"
    "Question: {question}\n"
    "Reply with the location only, in a few words."
)


class SmokeBenchmark:
    wording = None  # natural text: no templates to hand to oracle arms
    name = "smoke"

    def __init__(self, episodes: int = 3, objects: int = 2, seed: int = 42) -> None:
        if not 1 <= objects <= len(OBJECTS):
            raise ValueError(f"benchmark.objects must be in 1..{len(OBJECTS)}, not {objects}")
        self.n_episodes = episodes
        self.n_objects = objects
        self.seed = seed

    def episodes(self) -> list[Episode]:
        rng = random.Random(self.seed)
        out = []
        for e in range(self.n_episodes):
            seen, updates, questions = [], [], []
            for obj in rng.sample(OBJECTS, self.n_objects):
                first, second = rng.sample(PLACES, 2)
                seen.append(f"Earlier observation: the {obj} is in the {first}.")
                updates.append(
                    f"Update: the {obj} has been moved from the {first} to the {second}."
                )
                questions.append(
                    Question(
                        f"smoke-{e}-{obj}",
                        f"Where is the {obj} now?",
                        (second,),
                        meta={"object": obj, "stale": first},
                    )
                )
            # Every observation arrives before every update, each group in a random order.
            rng.shuffle(seen)
            rng.shuffle(updates)
            events = seen + updates
            out.append(
                Episode(
                    f"smoke-{e}",
                    tuple(Event(f"smoke-{e}-ev{i}", t) for i, t in enumerate(events)),
                    tuple(questions),
                )
            )
        return out

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]:
        text = ANSWER_PROMPT.format(context=context, question=question.text)
        return [{"role": "user", "content": text}]

    def prompts(self) -> dict[str, str]:
        return {"answer": ANSWER_PROMPT}

    def fingerprint(self) -> dict[str, Any]:
        payload = json.dumps(
            [
                [e.id, [v.text for v in e.events], [(q.id, q.text, q.golds) for q in e.questions]]
                for e in self.episodes()
            ]
        )
        return {
            "source": f"generated (seed {self.seed})",
            "sha256": hashlib.sha256(payload.encode()).hexdigest(),
        }
