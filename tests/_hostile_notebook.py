"""A notebook whose every part tries to run script when exported (tests of txlab.export)."""

from __future__ import annotations

import nbformat

from txlab.export import STATE_MIME, VIEW_MIME

# each payload, if it ran, pushes its tag to window.__pwned (the page's init script defines it)
P = "(window.__pwned=window.__pwned||[]).push"
MARKUP = {
    "script": f"<script>{P}('%s-script')</script>",
    "img-onerror": f'<img src="nonexistent.png" onerror="{P}(\'%s-img\')">',
    "svg-script": f"<svg><script>{P}('%s-svg')</script></svg>",
    "svg-onload": f"<svg onload=\"{P}('%s-svgload')\"><rect width=5 height=5></rect></svg>",
    "iframe-srcdoc": f"<iframe srcdoc=\"<script>parent.__pwned=parent.__pwned||[];parent.__pwned.push('%s-iframe')</script>\"></iframe>",
    "js-link": f'<a id="%s-jslink" href="javascript:{P}(\'%s-link\')">click</a>',
    "details-ontoggle": f"<details open ontoggle=\"{P}('%s-toggle')\"><summary>s</summary>x</details>",
    "object-data": "<object data=\"data:text/html,<script>parent.__pwned.push('%s-object')</script>\"></object>",
    "meta-refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "form-action": f'<form action="javascript:{P}(\'%s-form\')"><button id="%s-submit">go</button></form>',
}


def _fill(template: str, where: str) -> str:
    return template.replace("%s", where)


def markup(where: str) -> str:
    return "\n\n".join(_fill(t, where) for t in MARKUP.values())


def hostile_notebook(with_txlab_widget) -> nbformat.NotebookNode:
    """``with_txlab_widget``: a function returning (view_spec, manager_state) of a real txlab
    widget, so the offline renderer runs (and can be seen not to run the foreign ones)."""
    import anywidget
    import ipywidgets
    from ipywidgets.embed import dependency_state, embed_data

    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell("# hostile\n\n" + markup("md") + f"\n\n[md link](javascript:{P}('md-mdlink'))\n")
    raw = nbformat.v4.new_raw_cell(markup("raw"), metadata={"raw_mimetype": "text/html"})
    html_out = nbformat.v4.new_code_cell("html()")
    html_out.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": markup("html"), "text/plain": "html"})
    ]
    js_out = nbformat.v4.new_code_cell("js()")
    js_out.outputs = [
        nbformat.v4.new_output("display_data", data={"application/javascript": f"{P}('js-output')", "text/plain": "js"})
    ]
    svg_out = nbformat.v4.new_code_cell("svg()")
    svg_out.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "image/svg+xml": f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{P}('svgout-load')\">"
                f"<script>{P}('svgout-script')</script></svg>"
            },
        )
    ]
    mdout = nbformat.v4.new_code_cell("md()")
    mdout.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": markup("mdout")})]

    # synced the way txlab's own views sync theirs (View passes _esm= to AnyWidget)
    foreign = anywidget.AnyWidget(
        _esm=f"export default {{ render({{ el }}) {{ {P}('foreign-esm'); el.textContent = 'foreign widget ran'; }} }}"
    )
    htmlw = ipywidgets.HTML(
        value=markup("ipyhtml"), description='<img src=x onerror="' + P + "('desc')\">", description_allow_html=True
    )
    views, state = [], {}
    for w in (foreign, htmlw):
        d = embed_data(views=[w], state=dependency_state(w, drop_defaults=False), drop_defaults=False)
        views.append(d["view_specs"][0])
        state.update(d["manager_state"]["state"])
    own_view, own_state = with_txlab_widget()
    views.append(own_view)
    state.update(own_state["state"])
    wcells = []
    for spec in views:
        c = nbformat.v4.new_code_cell("widget")
        c.outputs = [nbformat.v4.new_output("display_data", data={VIEW_MIME: spec, "text/plain": "w"})]
        wcells.append(c)
    nb.cells = [md, raw, html_out, js_out, svg_out, mdout, *wcells]
    nb.metadata["widgets"] = {STATE_MIME: {"version_major": 2, "version_minor": 0, "state": state}}
    nb.metadata["title"] = "</title><script>" + P + "('title')</script>"
    foreign.close()
    htmlw.close()
    return nb


def txlab_widget():
    from ipywidgets.embed import dependency_state, embed_data

    from txlab import pipelines
    from txlab.views.pipeline import PipelineView

    w = PipelineView(pipelines.simulate(2, iterations=3))
    d = embed_data(views=[w], state=dependency_state(w, drop_defaults=False), drop_defaults=False)
    w.close()
    return d["view_specs"][0], d["manager_state"]
