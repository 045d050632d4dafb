package e2b

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The messages of envd's process.Process and filesystem.Filesystem
// services (E2B's spec/envd/*.proto), as Go structs in the protobuf JSON
// mapping the SDKs speak (Connect with useBinaryFormat: false). A oneof
// is a struct of pointers, at most one set; bytes are base64.

// jsonCodec is Connect's "json" codec over these structs.
type jsonCodec struct{}

func (jsonCodec) Name() string { return "json" }

func (jsonCodec) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

func (jsonCodec) Unmarshal(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // the JSON of a message with every field at its default
	}
	return json.Unmarshal(b, v)
}

type empty struct{}

// process.proto

type processConfig struct {
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args,omitempty"`
	Envs map[string]string `json:"envs,omitempty"`
	Cwd  *string           `json:"cwd,omitempty"`
}

type ptySize struct {
	Cols uint32 `json:"cols"`
	Rows uint32 `json:"rows"`
}

type ptyIn struct {
	Size *ptySize `json:"size,omitempty"`
}

type startRequest struct {
	Process *processConfig `json:"process"`
	Pty     *ptyIn         `json:"pty,omitempty"`
	Tag     *string        `json:"tag,omitempty"`
	Stdin   *bool          `json:"stdin,omitempty"`
}

type processEvent struct {
	Start     *startEvent `json:"start,omitempty"`
	Data      *dataEvent  `json:"data,omitempty"`
	End       *endEvent   `json:"end,omitempty"`
	Keepalive *empty      `json:"keepalive,omitempty"`
}

type startEvent struct {
	Pid uint32 `json:"pid"`
}

type dataEvent struct {
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	Pty    []byte `json:"pty,omitempty"`
}

type endEvent struct {
	ExitCode int32   `json:"exitCode"`
	Exited   bool    `json:"exited"`
	Status   string  `json:"status"`
	Error    *string `json:"error,omitempty"`
}

// eventResponse is both StartResponse and ConnectResponse.
type eventResponse struct {
	Event processEvent `json:"event"`
}

type processSelector struct {
	Pid *uint32 `json:"pid,omitempty"`
	Tag *string `json:"tag,omitempty"`
}

type connectRequest struct {
	Process *processSelector `json:"process"`
}

type processInfo struct {
	Config *processConfig `json:"config"`
	Pid    uint32         `json:"pid"`
	Tag    *string        `json:"tag,omitempty"`
}

type listResponse struct {
	Processes []processInfo `json:"processes"`
}

type processInput struct {
	Stdin []byte `json:"stdin,omitempty"`
	Pty   []byte `json:"pty,omitempty"`
}

type sendInputRequest struct {
	Process *processSelector `json:"process"`
	Input   *processInput    `json:"input"`
}

type streamInputRequest struct {
	Start *struct {
		Process *processSelector `json:"process"`
	} `json:"start,omitempty"`
	Data *struct {
		Input *processInput `json:"input"`
	} `json:"data,omitempty"`
	Keepalive *empty `json:"keepalive,omitempty"`
}

type sendSignalRequest struct {
	Process *processSelector `json:"process"`
	Signal  signal           `json:"signal"`
}

type closeStdinRequest struct {
	Process *processSelector `json:"process"`
}

type updateRequest struct {
	Process *processSelector `json:"process"`
	Pty     *ptyIn           `json:"pty,omitempty"`
}

// signal is process.Signal: its name or its number.
type signal int32

const (
	sigTERM signal = 15
	sigKILL signal = 9
)

func (s *signal) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		switch name {
		case "SIGNAL_SIGTERM":
			*s = sigTERM
		case "SIGNAL_SIGKILL":
			*s = sigKILL
		case "SIGNAL_UNSPECIFIED":
			*s = 0
		default:
			return fmt.Errorf("unknown signal %q", name)
		}
		return nil
	}
	var n int32
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("signal must be a name or a number")
	}
	*s = signal(n)
	return nil
}

// filesystem.proto

type fileType int32

const (
	fileTypeFile    fileType = 1
	fileTypeDir     fileType = 2
	fileTypeSymlink fileType = 3
)

func (t fileType) MarshalJSON() ([]byte, error) {
	switch t {
	case fileTypeFile:
		return []byte(`"FILE_TYPE_FILE"`), nil
	case fileTypeDir:
		return []byte(`"FILE_TYPE_DIRECTORY"`), nil
	case fileTypeSymlink:
		return []byte(`"FILE_TYPE_SYMLINK"`), nil
	}
	return []byte(`"FILE_TYPE_UNSPECIFIED"`), nil
}

type entryInfo struct {
	Name          string     `json:"name"`
	Type          fileType   `json:"type"`
	Path          string     `json:"path"`
	Size          int64      `json:"size"`
	Mode          uint32     `json:"mode"`
	Permissions   string     `json:"permissions"`
	Owner         string     `json:"owner"`
	Group         string     `json:"group"`
	ModifiedTime  *time.Time `json:"modifiedTime,omitempty"`
	SymlinkTarget *string    `json:"symlinkTarget,omitempty"`
}

type pathRequest struct {
	Path string `json:"path"`
}

type entryResponse struct {
	Entry *entryInfo `json:"entry"`
}

type moveRequest struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

type listDirRequest struct {
	Path  string `json:"path"`
	Depth uint32 `json:"depth"`
}

type listDirResponse struct {
	Entries []entryInfo `json:"entries"`
}

type watchDirRequest struct {
	Path               string `json:"path"`
	Recursive          bool   `json:"recursive"`
	IncludeEntry       bool   `json:"includeEntry"`
	AllowNetworkMounts bool   `json:"allowNetworkMounts"`
}

// eventType is filesystem.EventType.
type eventType int32

const (
	evCreate eventType = 1
	evWrite  eventType = 2
	evRemove eventType = 3
)

func (t eventType) MarshalJSON() ([]byte, error) {
	switch t {
	case evCreate:
		return []byte(`"EVENT_TYPE_CREATE"`), nil
	case evWrite:
		return []byte(`"EVENT_TYPE_WRITE"`), nil
	case evRemove:
		return []byte(`"EVENT_TYPE_REMOVE"`), nil
	}
	return []byte(`"EVENT_TYPE_UNSPECIFIED"`), nil
}

type filesystemEvent struct {
	Name  string     `json:"name"`
	Type  eventType  `json:"type"`
	Entry *entryInfo `json:"entry,omitempty"`
}

type watchDirResponse struct {
	Start      *empty           `json:"start,omitempty"`
	Filesystem *filesystemEvent `json:"filesystem,omitempty"`
	Keepalive  *empty           `json:"keepalive,omitempty"`
}
