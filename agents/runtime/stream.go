package runtime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/bullpen-hq/bullpen"
)

// MaxLine bounds one line of a CLI's stream (a tool result can be long).
const MaxLine = 16 << 20

// Read feeds r's lines to p and hands each event to emit, until EOF or the
// first error: a line that is not the CLI's JSON, a line over MaxLine, a
// stream without its final result, or a read error.
func Read(r io.Reader, p Parser, emit func(Event)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			evs, perr := p.Line(line)
			if perr != nil {
				return perr
			}
			for _, ev := range evs {
				emit(ev)
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return p.End()
		case err != nil:
			return err
		}
	}
}

// readLine returns the next line without its newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, bullpen.Errorf(bullpen.ETOOLARGE, "runtime: a line of the CLI's output is over %d MiB", MaxLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("runtime: read output: %w", err)
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}
