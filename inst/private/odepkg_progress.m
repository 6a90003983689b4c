## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{show}, @var{finish}] =} odepkg_progress (@var{solver}, @var{mode})
## The display of the option @qcode{"Progress"}.  @var{mode} is
## @qcode{"text"} (one line in the terminal, rewritten in place with a
## carriage return: the percentage of the span, the time reached, the wall
## time elapsed and an estimate of the rest; the last line ends with a
## newline) or @qcode{"waitbar"} (Octave's @code{waitbar}, opened at the
## first report, so an input error of the compiled side opens no window).
##
## @var{show} (@var{t}, @var{t0}, @var{tf}, @var{elapsed}, @var{done}) is
## what the compiled integration loop calls, at most four times a wall second
## and once at the end (@var{done} true); @var{finish} () ends the display
## whatever happened (the driver calls it in an unwind_protect cleanup, so an
## error or Ctrl-C leaves no open line nor a waitbar behind).  One display
## at a time: a solver called with "Progress" inside another's FCN shares it.
## @end deftypefn

function [show, finish] = odepkg_progress (solver, mode)

  display_state (struct ("line_open", false, "bar", [], "bar_opened", false));
  switch (mode)
    case "text"
      show = @(t, t0, tf, elapsed, done) show_text (solver, t, t0, tf, elapsed, done);
      finish = @() finish_text ();
    case "waitbar"
      show = @(t, t0, tf, elapsed, done) show_waitbar (solver, t, t0, tf, elapsed, done);
      finish = @() finish_waitbar ();
    otherwise
      error ("odepkg:invalidOption", '%s: option "Progress": unknown display "%s"', solver, mode);
  endswitch

endfunction

## The display's state: whether a text line was printed and not ended, the
## waitbar's handle and whether it was opened.
function s = display_state (new)
  persistent state = struct ("line_open", false, "bar", [], "bar_opened", false);
  if (nargin > 0)
    state = new;
  endif
  s = state;
endfunction

function show_text (solver, t, t0, tf, elapsed, done)
  f = fraction (t, t0, tf);
  if (done && f == 1)
    line = sprintf ("%s: 100 %%  t = %.6g  in %s", solver, t, duration (elapsed));
  elseif (done)
    line = sprintf ("%s: stopped at t = %.6g (%.1f %%) after %s", solver, t, 100 * f,
                    duration (elapsed));
  else
    line = sprintf ("%s: %5.1f %%  t = %.6g  elapsed %s  remaining %s", solver, 100 * f, t,
                    duration (elapsed), remaining (f, elapsed));
  endif
  ## padded to a fixed width, so a shorter line covers a longer one
  printf ("\r%-72s", line);
  if (done)
    printf ("\n");
  endif
  fflush (stdout);
  s = display_state ();
  s.line_open = ! done;
  display_state (s);
endfunction

function finish_text ()
  s = display_state ();
  if (s.line_open)
    printf ("\n");
    fflush (stdout);
    s.line_open = false;
    display_state (s);
  endif
endfunction

function show_waitbar (solver, t, t0, tf, elapsed, done)
  f = fraction (t, t0, tf);
  if (done)
    msg = sprintf ("%s: t = %.6g, %s", solver, t, duration (elapsed));
  else
    msg = sprintf ("%s: t = %.6g, %s elapsed, %s to go", solver, t, duration (elapsed),
                   remaining (f, elapsed));
  endif
  s = display_state ();
  if (! s.bar_opened)
    s.bar = waitbar (f, msg, "Name", solver);
    s.bar_opened = true;
    display_state (s);
  elseif (ishghandle (s.bar))
    waitbar (f, s.bar, msg);
  else
    return;                       # closed by the user: the run goes on
  endif
  drawnow ();
endfunction

function finish_waitbar ()
  s = display_state ();
  if (s.bar_opened && ishghandle (s.bar))
    delete (s.bar);
  endif
  s.bar = [];
  s.bar_opened = false;
  display_state (s);
endfunction

function f = fraction (t, t0, tf)
  if (tf == t0)
    f = 1;
  else
    f = min (max ((t - t0) / (tf - t0), 0), 1);
  endif
endfunction

## The rest at the average rate so far.
function s = remaining (f, elapsed)
  if (f <= 0)
    s = "?";
  else
    s = duration (elapsed * (1 - f) / f);
  endif
endfunction

function s = duration (sec)
  if (sec < 60)
    s = sprintf ("%.1f s", sec);
  elseif (sec < 3600)
    s = sprintf ("%d min %02d s", floor (sec / 60), floor (mod (sec, 60)));
  else
    s = sprintf ("%d h %02d min", floor (sec / 3600), floor (mod (sec, 3600) / 60));
  endif
endfunction
