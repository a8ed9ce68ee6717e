"""A readable rendering of a session log: who said what, what was heard, where it was cut."""

from __future__ import annotations

import json

from voice.conversation.items import AssistantText, ToolCall, ToolResult, UserText
from voice.conversation.log_records import (
    BackchannelHeard,
    BudgetShrunk,
    HistoryTrimmed,
    HoldChanged,
    InputReceived,
    InputRepeated,
    InputStopped,
    InputWithdrawn,
    ItemCommitted,
    PartFailed,
    ReplyHeard,
    SpeechIgnored,
    TurnEnded,
    TurnFailed,
    TurnLost,
    TurnStarted,
)
from voice.conversation.session_log import LoadedSession


def render_session(session: LoadedSession) -> str:
    lines = [f"session {session.path.name} started {session.started or '(unknown time)'}"]
    heard_so_far: str | None = None  # progress of a turn not yet ended
    for logged in session.events:
        if isinstance(logged.event, TurnEnded | TurnFailed | TurnLost):
            heard_so_far = None
        match logged.event:
            case InputReceived(text=text):
                lines.append(f"  user said   {text}")
            case InputWithdrawn():
                lines.append("  (the user went on: that was the start of what they said next)")
            case TurnStarted(turn=turn):
                lines.append(f"turn {turn}  ({logged.time})")
            case ItemCommitted(item=UserText()):
                pass  # the input lines above already show it, merged or not
            case ItemCommitted(item=AssistantText(text=text, interrupted=interrupted)):
                lines.append(f"  {'heard' if interrupted else 'assistant':<11} {text}")
            case ItemCommitted(item=ToolCall(name=name, arguments=arguments)):
                lines.append(f"  tool call   {name}({json.dumps(arguments)})")
            case ItemCommitted(item=ToolResult(output=output, failed=failed)):
                output = output.replace("\n", "\n" + " " * 14)  # a result of several lines stays indented
                lines.append(f"  {'tool failed' if failed else 'tool result':<11} {output}")
            case TurnEnded(cancelled=False):
                lines.append("  (played in full)")
            case TurnEnded(generated=generated, heard=heard, cut_s=cut_s):
                where = f" at {cut_s:.2f} s" if cut_s is not None else ""
                if heard and heard == generated:
                    lines.append("  (heard in full; the user spoke on while its tools ran)")
                elif heard:
                    unheard = generated[len(heard) :].strip()
                    lines.append(f"  cut{where}; generated but not heard: {unheard or '(nothing)'}")
                else:
                    lines.append(f"  cancelled{where} before anything was heard; the input carries over")
            case ReplyHeard(heard=heard):
                heard_so_far = heard  # how the turn ended says what was heard, if it ended
            case TurnLost(heard=heard, heard_s=heard_s):
                where = f" at {heard_s:.2f} s" if heard_s is not None else ""
                said = f"cut{where} after what was heard" if heard else "cut before anything was heard"
                lines.append(f"  (the session stopped mid-reply; closed on resume: {said})")
            case TurnFailed(reason=reason, heard=heard):
                said = f"after {heard!r} was heard" if heard else "before anything was heard"
                lines.append(f"  failed ({reason}) {said}; kept out of the history, the input carries over")
            case HistoryTrimmed(first_kept=first):
                lines.append(f"  (requests leave out history items before item {first} to fit the context)")
            case BudgetShrunk(tokens=tokens):
                lines.append(f"  (a request was refused as too large; the budget is now {tokens} tokens)")
            case InputRepeated(input_id=input_id):
                lines.append(f"  duplicate   input {input_id} came again and was dropped")
            case PartFailed(part=part, message=message):
                lines.append(f"  {part} failed: {message}")
            case HoldChanged(hold_ms=hold_ms, was_ms=was_ms, why=why):
                lines.append(f"  (the hold before answering went from {was_ms} to {hold_ms} ms: {why})")
            case BackchannelHeard(text=text, t=t):
                where = f" at {t:.2f} s" if t is not None else ""
                lines.append(f"  backchannel {text}  (said over the reply{where}; it went on, nothing asked)")
            case SpeechIgnored(text=text, why=why, t=t):
                where = f" at {t:.2f} s" if t is not None else ""
                heard = f" ({text})" if text else ""
                lines.append(f"  not words   {why}{heard}{where}: nothing asked")
            case InputStopped():
                lines.append("  (a stop: the reply was cut; nothing is asked until the user speaks again)")
    if heard_so_far is not None:
        lines.append(f"  (the log ends mid-reply; heard so far: {heard_so_far or '(nothing)'})")
    if session.torn_tail is not None:
        lines.append(f"(the last line was torn, {len(session.torn_tail)} bytes, and is ignored)")
    return "\n".join(lines)
