"""openai_responses protocol of fake_model.py (to be written)."""


def handle(req):
    return False
