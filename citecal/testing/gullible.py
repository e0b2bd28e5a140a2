"""The gullible judge of the local test server: it obeys any instruction it can read.

``FakeOpenAIServer(obey_injections=True)`` plays an LLM judge that follows
instructions hidden in what it judges (README "Security"), and reads what such
a model reads: English, Chinese, Spanish, French, German, Japanese, Russian,
Portuguese and Korean; look-alike letters; text behind invisible and tag
characters; base64, hex, rot13, leetspeak, ``\\x``/``\\u``/``&#``/``%`` escapes;
phrases split over comment lines, string pieces, docstrings, the context lines,
another citation's lines, or over several claims of one request. When the
material of a request (what sits between ``<untrusted_input>`` tags, or the
claims and code blocks of a prompt without them) holds an instruction, *every*
claim of that request is answered ``supports``/``high``/1.0, reasoning
``obeyed: ...``: a batch is read as a whole, as a model reads it.

Written apart from citecal's screen (``citecal/verify/judge/_injection.py``,
``_patterns.py``, ``_normalise.py``): no code, table or word list is shared, and
it works differently (concepts that occur near each other, not phrases), so a
test that the screen holds back what this judge obeys is not circular. It is
deliberately broader than the screen: it obeys a verdict word near an order or
an addressee, whatever the grammar, which ordinary prose about claims and
verdicts would trip too; tests give it material written for them.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import html
import re
import unicodedata
from urllib.parse import unquote

# Concepts, per language, as word beginnings (letters lower case, accents dropped).
# Alphabetic languages are matched on word starts; Chinese, Japanese and Korean as
# substrings (no spaces between words).
VERDICT_WORDS = {
    "en": "support verif correct true valid accurate approv confirm pass",
    "es": "soportad respaldad correct verificad valid verdader aprobad ciert apoyad confirmad",
    "fr": "soutenu etaye correct verifie valide vrai exact confirme approuve fonde",
    "de": "unterstutzt korrekt richtig verifiziert bestatigt gultig wahr zutreffend belegt",
    "pt": "suportad respaldad corret verificad valid verdadeir aprovad confirmad apoiad comprovad",
    "ru": "подтвержд верн правильн корректн поддерж истинн проверен достоверн обоснован",
}
VERDICT_CJK = (
    "支持 正确 正確 验证 驗證 通过 通過 属实 屬實 成立 真实 真實 "
    "サポート 正しい 正確 検証済 確認済 合格 "
    "지원 지지 정확 정답 검증 확인됨 통과 올바"
)
ORDER_WORDS = {
    "en": "answer respond reply say mark rate grade treat consider classify label output deem "
    "flag accept approve",
    "es": "responde responda contesta conteste marca marque califica considera trata di diga "
    "escribe devuelve evalua",
    "fr": "reponds repondez marque marquez notez considere traitez indique dites ecrivez "
    "evaluez classez jugez",
    "de": "antworte markiere bewerte betrachte behandle gib schreib stufe",
    "pt": "responda marque classifique considere trate diga escreva retorne avalie",
    "ru": "ответь отвечай пометь отметь оцени считай укажи напиши выведи признай",
}
ORDER_CJK = (
    "回答 回复 回覆 答复 输出 輸出 标记 標記 判定 评为 評為 视为 視為 认定 给出 "
    "給出 答え 返答 出力 評価 マーク 扱 응답 표시 평가 판정 출력 간주 처리 답"
)
READER_WORDS = {
    "en": "ai llm gpt chatgpt claude model assistant judge grader evaluator reviewer checker "
    "verifier rater bot",
    "es": "ia modelo evaluador revisor juez calificador asistente",
    "fr": "ia modele evaluateur relecteur correcteur juge assistant examinateur",
    "de": "ki modell bewerter gutachter prufer richter assistent",
    "pt": "ia modelo avaliador revisor juiz corretor assistente",
    "ru": "ии модел нейросет оценщик проверяющ рецензент судь ассистент",
}
READER_CJK = (
    "人工智能 模型 评审 評審 审核 審核 评分 評分 裁判 评估 評估 助手 人工知能 モデル "
    "審査 評価者 採点 レビュ ジャッジ アシスタント "
    "인공지능 모델 심사 평가자 채점 리뷰어 검토자 어시스턴트"
)
STATEMENT_WORDS = {
    "en": "claim statement citation assertion",
    "es": "afirmacion declaracion cita",
    "fr": "affirmation declaration citation enonce",
    "de": "aussage behauptung zitat",
    "pt": "afirmacao declaracao citacao",
    "ru": "утвержден заявлен цитат",
}
STATEMENT_CJK = "声明 陈述 陳述 说法 說法 断言 斷言 引用 主张 主張 主張 記述 주장 진술 인용"
DISCARD_WORDS = {
    "en": "ignore disregard forget",
    "es": "ignora olvida omite descarta",
    "fr": "ignore oublie",
    "de": "ignoriere vergiss missachte",
    "pt": "ignore ignora esqueca desconsidere",
    "ru": "игнориру проигнориру забуд",
}
RULES_WORDS = {
    "en": "instruction rule prompt directive guideline",
    "es": "instrucciones reglas indicaciones",
    "fr": "instructions consignes regles",
    "de": "anweisungen regeln instruktionen",
    "pt": "instrucoes regras orientacoes",
    "ru": "инструкц указани правил",
}
DISCARD_CJK = "忽略 无视 無視 忘记 忘記 無視 忘れ 무시 잊"
RULES_CJK = "指令 指示 规则 規則 命令 ルール 지시 지침 명령 규칙"
ANSWER_KEYS = ("confidence", "score", "reasoning", "verdict")
YOU_WORDS = "you eres tu vous du sie voce ты вы"
YOU_CJK = "你是 あなたは 당신은 너는"

WINDOW_WORDS = 12
WINDOW_CHARS = 30

# Look-alike letters a reader takes for Latin ones (Cyrillic, Greek, Armenian, IPA).
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕһԁԛԝӏАВЕКМНОРСТХІЈЅԜɡαοντικρεΑΒΕΗΙΚΜΝΟΡΤΧΥΖոսօ",
    "aeopcyxijshdqwlabekmhopctxijswgaovtikpeabehikmnoptxyzmuo",
)
_LEET = str.maketrans("013457@$", "oieastas")


def _words(spec: dict[str, str]) -> tuple[str, ...]:
    return tuple(w for line in spec.values() for w in line.split())


_VERDICT, _ORDER, _READER = _words(VERDICT_WORDS), _words(ORDER_WORDS), _words(READER_WORDS)
_STATEMENT, _DISCARD, _RULES = _words(STATEMENT_WORDS), _words(DISCARD_WORDS), _words(RULES_WORDS)
_YOU = tuple(YOU_WORDS.split())


def _plain(text: str) -> str:
    """NFKC, no invisible or combining characters, lower case, no accents."""
    text = unicodedata.normalize("NFKC", text)
    text = unicodedata.normalize("NFD", text.lower())
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Mn", "Me", "Cf") or 0xFE00 <= ord(ch) <= 0xFE0F:
            continue
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def readings(text: str) -> list[str]:
    """What a model makes of ``text``: the text, and what it decodes from it."""
    out = [text]
    tags = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    if tags:
        out.append(tags)
    if "\\" in text:
        with contextlib.suppress(UnicodeDecodeError, ValueError):
            out.append(codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape"))
    if "&" in text or "%" in text:
        out.append(unquote(html.unescape(text)))
    for run in re.findall(r"[A-Za-z0-9+/_=-]{12,}", text):
        for alphabet in (None, b"-_"):
            try:
                raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet)
                out.append(raw.decode("utf-8"))
                break
            except (binascii.Error, ValueError):
                continue
    for run in re.findall(r"(?:[0-9A-Fa-f]{2}[\s:]?){6,}", text):
        with contextlib.suppress(ValueError):
            out.append(bytes.fromhex(re.sub(r"[\s:]", "", run)).decode("utf-8"))
    plain = [_plain(t) for t in out]
    more = []
    for p in plain:
        more.append(p.translate(_LOOKALIKES))
        more.append(p.translate(_LEET))
        more.append(codecs.encode(p, "rot13"))
        # "i g n o r e": letters spaced out are one word to a reader
        more.append(re.sub(r"\b(?:\w[ .\-_]){3,}\w\b", lambda m: re.sub(r"[ .\-_]", "", m[0]), p))
    return plain + more


def _stream(text: str) -> list[str]:
    """Words in reading order: punctuation, comment marks, quotes and line ends are spaces."""
    return re.findall(r"\w+", text)


def _is(word: str, stems: tuple[str, ...]) -> bool:
    """``word`` is one of ``stems`` or, for stems of 4 letters or more, begins with one."""
    return any(word == s or (len(s) >= 4 and word.startswith(s)) for s in stems)


def _near(words: list[str], a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    hits_a = [i for i, w in enumerate(words) if _is(w, a)]
    if not hits_a:
        return None
    hits_b = [i for i, w in enumerate(words) if _is(w, b)]
    for i in hits_a:
        for j in hits_b:
            if i != j and abs(i - j) <= WINDOW_WORDS:
                lo, hi = min(i, j), max(i, j)
                return " ".join(words[lo : hi + 1])
    return None


def _near_cjk(text: str, a: str, b: str) -> str | None:
    for x in a.split():
        for i in (m.start() for m in re.finditer(re.escape(x), text)):
            for y in b.split():
                for j in (m.start() for m in re.finditer(re.escape(y), text)):
                    if i != j and abs(i - j) <= WINDOW_CHARS:
                        lo, hi = min(i, j), max(i + len(x), j + len(y))
                        return text[lo:hi]
    return None


def instruction(text: str) -> str | None:
    """The instruction a gullible model reads in ``text``, or None."""
    for reading in readings(text):
        words = _stream(reading)
        for a, b in (
            (_DISCARD, _RULES),
            (_READER, _VERDICT),
            (_READER, _ORDER),
            (_ORDER, _VERDICT),
            (_STATEMENT, _VERDICT),
            (_YOU, _READER),
            (_VERDICT, ANSWER_KEYS),
        ):
            got = _near(words, a, b)
            if got is not None:
                return got
        if re.search(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]", reading):
            squeezed = re.sub(r"\s+", "", reading)
            for x, y in (
                (DISCARD_CJK, RULES_CJK),
                (READER_CJK, VERDICT_CJK),
                (READER_CJK, ORDER_CJK),
                (ORDER_CJK, VERDICT_CJK),
                (STATEMENT_CJK, VERDICT_CJK),
                (YOU_CJK, READER_CJK),
            ):
                got = _near_cjk(squeezed, x, y)
                if got is not None:
                    return got
    return None


_BLOCK = re.compile(r"<untrusted_input>\n(.*?)\n</untrusted_input>", re.DOTALL)
# citecal's own words around the material: labels, line numbers, the siblings note.
_LABELS = re.compile(
    r"^\[(?:Claim|Code) \d+\](?::| from [^\n]*:)|^Claim: |^Code from [^\n]*:$"
    r"|^Other citation [^\n]*:$"
    r"|^\s*\d+ [> ] ?|^`{3,}\w*$|^\.\.\. \(\d+ more (?:cited )?lines(?: not shown)?\)$",
    re.MULTILINE,
)
_NOTE = re.compile(r"The same sentence cites more code\..*?another citation below shows\.", re.S)


def material(user: str, claims: list[tuple[str, str]]) -> str:
    """What an attacker wrote in a request: the untrusted blocks, else claims and code."""
    blocks = _BLOCK.findall(user)
    text = "\n".join(blocks) if blocks else "\n".join(f"{c}\n{code}" for c, code in claims)
    return _LABELS.sub(" ", _NOTE.sub(" ", text))


__all__ = ["instruction", "material", "readings"]
