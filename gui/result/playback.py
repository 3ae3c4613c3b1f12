"""Playing the result from its store through a StoreFeeder, while the run goes on or after; stop,
seek, and a lost device said plainly. A part of ResultPanel.
"""

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.errors import StudioError
from chattts_studio.core.results.feeder import StoreFeeder
from chattts_studio.gui.i18n import core_text
from chattts_studio.gui.result.base import ResultBase


class ResultPlayback(ResultBase):
    """Mixed into ResultPanel (its store, player and buttons)."""

    def _init_playback(self) -> None:
        self._feeder: StoreFeeder | None = None
        self._silenced = False  # Stop pressed during this run: nothing more streams until Play
        self._handed = 0  # samples handed to the player when no feeder runs
        # The stream playing is ours: when it stops before the feeder ended it, it lost its
        # device. False when the player is not ours or was stopped on purpose.
        self._ours = False
        self._running_store = None
        # Someone else (a project's take, an audition) plays on the shared player: what it
        # plays is not this result, though the player's position says where it is.
        self.lent = False

    @property
    def _streamed(self) -> int:
        """Where the audio handed to the player ends."""
        return self._feeder.fed if self._feeder is not None else self._handed

    @property
    def _feeding(self) -> bool:
        return self._feeder is not None and self._feeder.alive

    def _stream(self) -> None:
        """During a run: the first new audio opens one continuous stream, which then follows
        the store (it plays silence, not a gap, while it waits)."""
        self._check_playback()
        if (
            not (self.running and self.stream_box.isChecked())
            or self.output_problem
            or self._silenced
        ):
            self._finish_stream(cap=True)  # unticked: what is queued still plays to its end
            return
        if self.length <= self._streamed or self._feeding:
            return
        if not self.player.playing:  # else someone else's sound (or a whole buffer) plays
            self._open_stream(self._streamed)

    def _open_stream(self, start: int) -> bool:
        """Play the store from `start` on one stream (which follows the run while it goes)."""
        self._stop_feeder()
        if self.store is None:
            return False
        feeder = StoreFeeder(self.player, self.store, start)
        feeder.open()  # on the feeder's thread: a failure shows at the next tick
        self._feeder = feeder
        self._ours = True
        self.lent = False
        self.stop_button.setEnabled(True)
        self.stream_opened.emit()
        return True

    def _finish_stream(self, cap: bool = False) -> None:
        """No more audio for the stream: it stops after the store's end (or, with `cap`, after
        what it was handed already)."""
        if self._feeder is not None:
            self._feeder.finish(self._feeder.fed if cap else None)

    def _stop_feeder(self) -> None:
        feeder, self._feeder = self._feeder, None
        if feeder is not None:
            feeder.stop()
            self._handed = feeder.fed

    def _say_play(self, text: str) -> None:
        """A playback outcome: beside Play, and to the window."""
        self.output_note.setText(text)
        self.message.emit(text)

    def _playback_failed(self, exc: StudioError) -> None:
        # Remembered, so streaming does not retry on every tick; play() checks again.
        self._ours = False
        self.output_problem = core_text(exc)
        self._say_play(self.output_problem)

    def stop(self) -> None:
        self._ours = False
        self._stop_feeder()
        self.player.stop()
        self.stop_button.setEnabled(False)

    def user_stop(self) -> None:
        """Stop pressed: silence for the rest of this run too, not only until the next chunk
        (Play starts listening again)."""
        if self.running:
            self._silenced = True
        self.stop()

    def forget_playback(self) -> None:
        """Someone else (the audition dialog, a project's take) takes the shared player over."""
        self._ours = False
        self.lent = True
        self._stop_feeder()

    def _check_playback(self) -> None:
        """A stream that ended before its last sample lost its device (unplugged, or the sound
        server went away): say so, instead of a silent stop."""
        feeder = self._feeder
        if not self._ours or self.player.playing or (feeder is not None and feeder.opening):
            return
        self._ours = False
        if feeder is not None and feeder.error is not None:
            self._stop_feeder()
            self._playback_failed(feeder.error)
            return
        whole = feeder is not None and feeder.ended and self.player.position >= feeder.fed
        self._stop_feeder()
        if not whole:
            seconds = self.player.position / SAMPLE_RATE
            self._say_play(
                self.tr(
                    "Playback stopped at {0:.1f} s: the audio device stopped responding. The "
                    "audio can still be saved."
                ).format(seconds)
            )
