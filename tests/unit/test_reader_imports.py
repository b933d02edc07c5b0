"""The reader's training and runtime import without LangChain: the GPU machine has none."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_reader_and_its_training_import_without_langchain() -> None:
    code = ("import sys\n"
            "for name in ('langchain_core', 'langchain', 'langsmith'):\n"
            "    sys.modules[name] = None  # any import of them now raises ImportError\n"
            "import textbound.answer.answerability\n"
            "import training.answerability.data, training.answerability.features\n"
            "import training.answerability.train, training.answerability.export\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
