"""Where a form's errors become an answer: a ``BadParameter`` the view guards turn into a 400
(``{"error": ...}`` for the API and actions, the error page for pages).

Field messages start with ``%(name)s``: the parameter as the client spelled it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django import forms
from django.http import HttpRequest

from queues.errors import BadParameter
from queues.reads import jsontext

FormType = TypeVar("FormType", bound=forms.Form)


def valid(form: FormType) -> FormType:
    """``form``, once valid; otherwise its first error, as a 400."""
    if form.is_valid():
        return form
    for name, errors in form.errors.as_data().items():
        for error in errors:
            for problem in error.error_list:
                params = {"name": name, **(problem.params or {})}
                raise BadParameter(str(problem.message) % params)
    raise BadParameter("Invalid parameters")  # not reached: an invalid form has an error


def action_input(request: HttpRequest) -> dict[str, Any]:
    """An action's parameters: the query string, then a JSON object body or a form body over
    it. A form body's ``ids`` stays a list (one per checked row)."""
    merged: dict[str, Any] = dict(request.GET.items())
    if request.content_type == "application/json" and request.body:
        try:
            body = jsontext.loads_shown(request.body.decode("utf-8", "replace"))
        except jsontext.TooDeep:
            raise BadParameter(
                f"The JSON body is nested deeper than {jsontext.MAX_DEPTH} levels"
            ) from None
        except ValueError:
            raise BadParameter("The body is not valid JSON") from None
        if not isinstance(body, dict):
            raise BadParameter("The JSON body must be an object")
        merged.update(body)
    else:
        for key in request.POST:
            values = request.POST.getlist(key)
            merged[key] = values if key == "ids" else values[-1]
    return merged
