package e2b

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// processHandlers serves process.Process.
func (s *Server) processHandlers(opts []connect.HandlerOption) []route {
	return []route{
		{"/process.Process/Start", connect.NewServerStreamHandler("/process.Process/Start", s.start, opts...)},
		{"/process.Process/Connect", connect.NewServerStreamHandler("/process.Process/Connect", s.connectProc, opts...)},
		{"/process.Process/StreamInput", connect.NewClientStreamHandler("/process.Process/StreamInput", s.streamInput, opts...)},
		unary(s, "/process.Process/List", opts, s.listProcs),
		unary(s, "/process.Process/SendInput", opts, s.sendInput),
		unary(s, "/process.Process/SendSignal", opts, s.sendSignal),
		unary(s, "/process.Process/CloseStdin", opts, s.closeStdin),
		unary(s, "/process.Process/Update", opts, s.update),
	}
}

// pider is what the sandbox service's commands also tell: their pid in
// the sandbox.
type pider interface{ Pid() int }

// execRequest turns a start into a command. A PTY runs the command on a
// terminal of the asked size (ExecRequest.PTY).
func execRequest(in *startRequest) (sandbox.ExecRequest, bool, error) {
	if in.Process == nil || in.Process.Cmd == "" {
		return sandbox.ExecRequest{}, false, bullpen.Errorf(bullpen.EINVALID, "process.cmd is required")
	}
	req := sandbox.ExecRequest{Cmd: append([]string{in.Process.Cmd}, in.Process.Args...), Env: in.Process.Envs}
	if in.Process.Cwd != nil {
		req.Workdir = *in.Process.Cwd
	}
	if in.Pty == nil {
		return req, false, nil
	}
	rows, cols := 24, 80
	if sz := in.Pty.Size; sz != nil {
		rows, cols = int(min(sz.Rows, sandbox.MaxPTYSide+1)), int(min(sz.Cols, sandbox.MaxPTYSide+1))
	}
	req.PTY = &sandbox.PTYSize{Rows: rows, Cols: cols}
	return req, true, nil
}

// start runs a command and streams its events: start (the pid), data,
// end. The command keeps running if the stream goes away.
func (s *Server) start(ctx context.Context, req *connect.Request[startRequest], stream *connect.ServerStream[eventResponse]) error {
	me, id, err := s.sandboxOf(ctx)
	if err != nil {
		return s.rpcError(err)
	}
	in := req.Msg
	ereq, pty, err := execRequest(in)
	if err != nil {
		return s.rpcError(err)
	}
	var stdin *io.PipeWriter
	if pty || (in.Stdin != nil && *in.Stdin) {
		var r *io.PipeReader
		r, stdin = io.Pipe()
		ereq.Stdin = r
	}
	// The command runs under the server's context, not the request's: it
	// outlives the stream, as E2B's background commands do.
	cmd, err := s.cfg.Boxes.Exec(s.ctx, me, id, ereq)
	if err != nil {
		if stdin != nil {
			stdin.Close()
		}
		return s.rpcError(err)
	}
	p := &proc{sandboxID: id, tag: in.Tag, cfg: in.Process, pty: pty, cmd: cmd, subs: map[*sub]struct{}{}}
	if pd, ok := cmd.(pider); ok {
		p.pid = uint32(pd.Pid())
	}
	if stdin != nil {
		p.input = make(chan []byte, 1024)
		go feed(p.input, stdin)
	}
	first := p.subscribe()
	s.procs.add(p)
	go s.pump(p)
	return s.follow(ctx, p, first, stream, keepalive(req.Header()))
}

// keepalive is the interval of a stream's keepalive events: the SDKs ask
// for one in Keepalive-Ping-Interval (seconds); default 50 s. They also
// tell a stream whose client went away (see web.streamE2B).
func keepalive(h http.Header) time.Duration {
	if n, err := strconv.Atoi(h.Get("Keepalive-Ping-Interval")); err == nil && n >= 1 && n <= 3600 {
		return time.Duration(n) * time.Second
	}
	return 50 * time.Second
}

// feed writes queued input to the command's stdin until it is closed.
func feed(in <-chan []byte, w *io.PipeWriter) {
	for b := range in {
		if _, err := w.Write(b); err != nil {
			break
		}
	}
	w.Close()
	for range in { // drop what comes after the command stopped reading
	}
}

// pump reads a command's output into events, then its end.
func (s *Server) pump(p *proc) {
	defer s.procs.remove(p)
	for c := range p.cmd.Output() {
		d := &dataEvent{}
		switch {
		case p.pty:
			d.Pty = c.Data
		case c.Stream == "stderr":
			d.Stderr = c.Data
		default:
			d.Stdout = c.Data
		}
		p.publish(processEvent{Data: d})
	}
	res, err := p.cmd.Wait()
	if p.input != nil {
		p.endInput()
	}
	end := &endEvent{ExitCode: int32(res.ExitCode), Exited: res.Signal == "", Status: "exit status " + strconv.Itoa(res.ExitCode)}
	if res.Signal != "" {
		end.Status = "signal: " + res.Signal
	}
	if res.TimedOut {
		end.Status = "timed out"
	}
	if err != nil {
		msg := bullpen.ErrorMessage(err)
		end.Error, end.Exited, end.ExitCode = &msg, false, -1
	}
	p.publish(processEvent{End: end})
}

// follow sends a proc's events to one stream: the start, then what the
// proc publishes, until its end or until the stream goes away.
func (s *Server) follow(ctx context.Context, p *proc, sb *sub, stream *connect.ServerStream[eventResponse], every time.Duration) error {
	defer func() {
		close(sb.done)
		p.unsubscribe(sb)
	}()
	if err := stream.Send(&eventResponse{Event: processEvent{Start: &startEvent{Pid: p.pid}}}); err != nil {
		return err
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := stream.Send(&eventResponse{Event: processEvent{Keepalive: &empty{}}}); err != nil {
				return err
			}
		case ev, ok := <-sb.ch:
			if !ok {
				return nil
			}
			if err := stream.Send(&eventResponse{Event: ev}); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return connect.NewError(connect.CodeUnavailable, fmt.Errorf("the server is shutting down"))
		}
	}
}

// connectProc streams the events of a running command from now on.
func (s *Server) connectProc(ctx context.Context, req *connect.Request[connectRequest], stream *connect.ServerStream[eventResponse]) error {
	_, id, err := s.sandboxOf(ctx)
	if err != nil {
		return s.rpcError(err)
	}
	p, err := s.procs.find(id, req.Msg.Process)
	if err != nil {
		return s.rpcError(err)
	}
	sb := p.subscribe()
	if sb == nil {
		return s.rpcError(bullpen.Errorf(bullpen.ENOTFOUND, "process %d has ended", p.pid))
	}
	return s.follow(ctx, p, sb, stream, keepalive(req.Header()))
}

func (s *Server) listProcs(ctx context.Context, me bullpen.Member, id string, _ *empty) (*listResponse, error) {
	out := &listResponse{Processes: []processInfo{}}
	for _, p := range s.procs.list(id) {
		out.Processes = append(out.Processes, processInfo{Config: p.cfg, Pid: p.pid, Tag: p.tag})
	}
	return out, nil
}

func (s *Server) sendInput(ctx context.Context, me bullpen.Member, id string, in *sendInputRequest) (*empty, error) {
	p, err := s.procs.find(id, in.Process)
	if err != nil {
		return nil, err
	}
	if in.Input == nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "input is required")
	}
	b := in.Input.Stdin
	if in.Input.Pty != nil {
		b = in.Input.Pty
	}
	return &empty{}, p.send(b)
}

// streamInput takes a start naming the process, then input in order.
func (s *Server) streamInput(ctx context.Context, stream *connect.ClientStream[streamInputRequest]) (*connect.Response[empty], error) {
	_, id, err := s.sandboxOf(ctx)
	if err != nil {
		return nil, s.rpcError(err)
	}
	var p *proc
	for stream.Receive() {
		m := stream.Msg()
		switch {
		case m.Start != nil:
			if p, err = s.procs.find(id, m.Start.Process); err != nil {
				return nil, s.rpcError(err)
			}
		case m.Data != nil:
			if p == nil {
				return nil, s.rpcError(bullpen.Errorf(bullpen.EINVALID, "the first message must be start, naming the process"))
			}
			if m.Data.Input != nil {
				b := m.Data.Input.Stdin
				if m.Data.Input.Pty != nil {
					b = m.Data.Input.Pty
				}
				if err := p.send(b); err != nil {
					return nil, s.rpcError(err)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&empty{}), nil
}

// sendSignal kills the command (SIGKILL) or asks it to end (SIGTERM, sent
// to its process group from inside the sandbox).
func (s *Server) sendSignal(ctx context.Context, me bullpen.Member, id string, in *sendSignalRequest) (*empty, error) {
	p, err := s.procs.find(id, in.Process)
	if err != nil {
		return nil, err
	}
	switch in.Signal {
	case sigKILL:
		return &empty{}, p.cmd.Kill()
	case sigTERM:
		return &empty{}, s.inSandbox(ctx, me, id, "kill", "-TERM", "--", "-"+strconv.Itoa(int(p.pid)))
	}
	return nil, bullpen.Errorf(bullpen.EINVALID, "signal must be SIGNAL_SIGTERM or SIGNAL_SIGKILL")
}

func (s *Server) closeStdin(ctx context.Context, me bullpen.Member, id string, in *closeStdinRequest) (*empty, error) {
	p, err := s.procs.find(id, in.Process)
	if err != nil {
		return nil, err
	}
	return &empty{}, p.closeStdin()
}

// update resizes a PTY: stty on the terminal of script's child, run in the
// sandbox.
func (s *Server) update(ctx context.Context, me bullpen.Member, id string, in *updateRequest) (*empty, error) {
	p, err := s.procs.find(id, in.Process)
	if err != nil {
		return nil, err
	}
	if in.Pty == nil || in.Pty.Size == nil {
		return &empty{}, nil
	}
	if !p.pty {
		return nil, bullpen.Errorf(bullpen.EINVALID, "process %d has no PTY", p.pid)
	}
	sz := in.Pty.Size
	rows, cols := int(min(sz.Rows, sandbox.MaxPTYSide+1)), int(min(sz.Cols, sandbox.MaxPTYSide+1))
	if r, ok := p.cmd.(interface {
		Resize(ctx context.Context, rows, cols int) error
	}); ok { // the sandbox service's commands resize without a command in the history
		return &empty{}, r.Resize(ctx, rows, cols)
	}
	cmd, err := sandbox.PTYResizeCommand(int(p.pid), rows, cols)
	if err != nil {
		return nil, err
	}
	return &empty{}, s.inSandbox(ctx, me, id, cmd...)
}

// inSandbox runs a short helper command in the sandbox and fails if it
// does.
func (s *Server) inSandbox(ctx context.Context, me bullpen.Member, id string, cmd ...string) error {
	c, err := s.cfg.Boxes.Exec(ctx, me, id, sandbox.ExecRequest{Cmd: cmd})
	if err != nil {
		return err
	}
	var msg []byte
	for ch := range c.Output() {
		if len(msg) < 512 {
			msg = append(msg, ch.Data...)
		}
	}
	res, err := c.Wait()
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "%s failed in the sandbox: %s", cmd[0], clip(strings.TrimSpace(string(msg))))
	}
	return nil
}
