"""FactConsolidation's official prompts, ported character for character.

The arms answer under exactly the prompts MemoryAgentBench's agents use, so our numbers are
comparable to the paper's (§4.3, Appendix B.4); the benchmark fills them in
(``FactConsolidation.answer_messages``) and records them in every run (``prompts``).
"""

from __future__ import annotations

__all__ = [
    "MEMORIZE_TEMPLATE",
    "QUERY_AGENTIC_TEMPLATE",
    "QUERY_TEMPLATE",
    "SYSTEM_MESSAGE",
    "TIME_STAMP",
]

# --------------------------------------------------------------------------------------------
# The official prompts (HUST-AI-HYZ/MemoryAgentBench @ 455306dcabc3842526eb83cd4e225e5d486c5c5d,
# utils/templates.py, BASE_TEMPLATES["factconsolidation"]; MIT). Ported character for character:
# in the official source the memorize template's first line break is written ``\\n``, so the
# model sees a literal backslash-n there, and a real line break everywhere else.
# --------------------------------------------------------------------------------------------

SYSTEM_MESSAGE = (
    "You are a helpful assistant that can read the context and memorize it for future retrieval."
)
MEMORIZE_TEMPLATE = (
    "Dialogue between User and Assistant {time_stamp} \\n<User> The following context is the "
    "facts I have learned: \n{context}\n <Assistant> I have learned the facts and I will answer "
    "the question you ask."
)
QUERY_TEMPLATE = (
    "Pretend you are a knowledge management system. Each fact in the knowledge pool is provided "
    "with a serial number at the beginning, and the newer fact has larger serial number. \n You "
    "need to solve the conflicts of facts in the knowledge pool by finding the newest fact with "
    "larger serial number. You need to answer a question based on this rule. You should give a "
    "very concise answer without saying other words for the question **only** from the knowledge "
    "pool you have memorized rather than the real facts in real world. \n\nFor example:\n\n "
    "[Knowledge Pool] \n\n Question: Based on the provided Knowledge Pool, what is the name of the "
    "current president of Russia? \nAnswer: Donald Trump \n\n Now Answer the Question: Based on "
    "the provided Knowledge Pool, {question} \nAnswer:"
)
# The agentic-memory agents' variant ("Archival Memory"; the double spaces are the official's).
QUERY_AGENTIC_TEMPLATE = (
    "Pretend you are a knowledge management system. Each fact in the  Archival Memory is provided "
    "with a serial number at the beginning, and the newer fact has larger serial number. \n You "
    "need to solve the conflicts of facts in the Archival Memory by finding the newest fact with "
    "larger serial number. You need to answer a question based on this rule. You should give a "
    "very concise answer without saying other words for the question **only** from the knowledge "
    "pool you have memorized rather than the real facts in real world. \n\nFor example:\n\n "
    "[Archival Memory] \n\n Question: Based on the Archival Memory, what is the name of the "
    "current president of Russia? \nAnswer: Donald Trump \n\n Now Answer the Question: Based on "
    "the  Archival Memory, {question} \nAnswer:"
)
# The official code fills {time_stamp} with the wall clock (time.strftime("%Y-%m-%d %H:%M:%S")),
# which would make every prompt hash differ between runs. We fix one value in the same format.
TIME_STAMP = "2025-01-01 00:00:00"
