"""LongMemEval's official prompts, word for word: the reading prompt and the judge prompts.

Ported character for character from xiaowu0162/LongMemEval @
9e0b455f4ef0e2ab8f2e582289761153549043fc (MIT). The benchmark answers with
``READING_TEMPLATES`` and hashes ``JUDGE_TEMPLATES`` into every run's manifest; the judges fill
them per question (``judge_prompt``). The paper's own judge uses (B.1) live with the judges.
"""

from __future__ import annotations

__all__ = [
    "JUDGE_TEMPLATES",
    "READING_TEMPLATES",
    "judge_prompt",
    "judge_template_name",
]

# --------------------------------------------------------------------------------------------
# The official reading prompt (xiaowu0162/LongMemEval @ 9e0b455f4ef0e2ab8f2e582289761153549043fc,
# src/generation/run_generation.py, `prepare_prompt`, retrieval readers without key expansion;
# MIT). Ported character for character. Slots: history, current date (the question_date string
# as released, e.g. "2023/05/30 (Tue) 23:40"), question. The official code sends it as a single
# user message. `direct` is the plain reader; `cot` is the "con" reading method (the official
# script's default), which asks for step-by-step answers.
# --------------------------------------------------------------------------------------------

READING_TEMPLATES: dict[str, str] = {
    "direct": (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent "
        "Date: {}\nQuestion: {}\nAnswer:"
    ),
    "cot": (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history. Answer the question step by step: first "
        "extract all the relevant information, and then reason over the information to get the "
        "answer.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer (step by "
        "step):"
    ),
}


# --------------------------------------------------------------------------------------------
# The official judge prompts (src/evaluation/evaluate_qa.py, `get_anscheck_prompt`), character
# for character (slots: question, answer, response).
# Note the official quirk kept here: the general and temporal templates have a space before
# "\n\nQuestion:"; the knowledge-update, preference and abstention templates do not.
# --------------------------------------------------------------------------------------------

JUDGE_TEMPLATES: dict[str, str] = {
    # single-session-user, single-session-assistant, multi-session
    "default": (
        "I will give you a question, a correct answer, and a response from a model. Please "
        "answer yes if the response contains the correct answer. Otherwise, answer no. If the "
        "response is equivalent to the correct answer or contains all the intermediate steps to "
        "get the correct answer, you should also answer yes. If the response only contains a "
        "subset of the information required by the answer, answer no. \n\nQuestion: {}\n\n"
        "Correct Answer: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes "
        "or no only."
    ),
    "temporal-reasoning": (
        "I will give you a question, a correct answer, and a response from a model. Please "
        "answer yes if the response contains the correct answer. Otherwise, answer no. If the "
        "response is equivalent to the correct answer or contains all the intermediate steps to "
        "get the correct answer, you should also answer yes. If the response only contains a "
        "subset of the information required by the answer, answer no. In addition, do not "
        "penalize off-by-one errors for the number of days. If the question asks for the number "
        "of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 "
        "days when the answer is 18), the model's response is still correct. \n\nQuestion: {}"
        "\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response correct? Answer "
        "yes or no only."
    ),
    "knowledge-update": (
        "I will give you a question, a correct answer, and a response from a model. Please "
        "answer yes if the response contains the correct answer. Otherwise, answer no. If the "
        "response contains some previous information along with an updated answer, the "
        "response should be considered as correct as long as the updated answer is the "
        "required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs "
        "the model response correct? Answer yes or no only."
    ),
    "single-session-preference": (
        "I will give you a question, a rubric for desired personalized response, and a response "
        "from a model. Please answer yes if the response satisfies the desired response. "
        "Otherwise, answer no. The model does not need to reflect all the points in the rubric. "
        "The response is correct as long as it recalls and utilizes the user's personal "
        "information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel Response: {}\n\nIs the "
        "model response correct? Answer yes or no only."
    ),
    "abstention": (
        "I will give you an unanswerable question, an explanation, and a response from a model. "
        "Please answer yes if the model correctly identifies the question as unanswerable. The "
        "model could say that the information is incomplete, or some other information is "
        "given but the asked information is not.\n\nQuestion: {}\n\nExplanation: {}\n\nModel "
        "Response: {}\n\nDoes the model correctly identify the question as unanswerable? Answer "
        "yes or no only."
    ),
}
_TEMPLATE_FOR_TYPE = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal-reasoning",
    "knowledge-update": "knowledge-update",
    "single-session-preference": "single-session-preference",
}


def judge_template_name(question_type: str, abstention: bool = False) -> str:
    """Which official template judges a question: abstention overrides the type."""
    if abstention:
        return "abstention"
    if question_type not in _TEMPLATE_FOR_TYPE:
        raise ValueError(
            f"no LongMemEval judge prompt for question type {question_type!r}; "
            f"known: {', '.join(_TEMPLATE_FOR_TYPE)}"
        )
    return _TEMPLATE_FOR_TYPE[question_type]


def judge_prompt(
    question_type: str, question: str, answer: str, response: str, abstention: bool = False
) -> str:
    """The official judge prompt, filled as evaluate_qa.py fills it (``str.format``)."""
    template = JUDGE_TEMPLATES[judge_template_name(question_type, abstention)]
    return template.format(question, answer, response)
