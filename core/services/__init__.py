"""The jobs every front end runs, one function (or small class) per kind of job: the CLI, the
window's worker, the speech API and the Ray workers call these, never the machinery beneath
them. Plain arguments in (the engine, a request, a CancelToken, callbacks), a plain result out;
no Qt, and no sentences where the window and the CLI word a thing differently."""
