package diffusion

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// A training checkpoint holds a prior's whole training state, so that a
// killed run resumes exactly:
//
//	offset 0   8 bytes  magic "FLABCKPT"
//	offset 8   uint32   header length L (little-endian)
//	offset 12  L bytes  header, JSON: where the run is, its record, the
//	                    parameters' names and sizes, Adam's step count
//	then       float32  the weights, their moving average, and Adam's first
//	                    and second moments, each parameter by parameter
//	then       uint32   CRC-32C of every byte before it
const checkpointMagic = "FLABCKPT"

// maxCheckpointBytes bounds a checkpoint file: four copies of weights that
// a model file (at most 1 GiB) holds once.
const maxCheckpointBytes = 4 << 30

type checkpointHeader struct {
	State     trainState       `json:"state"`
	Params    []checkpointSize `json:"params"`
	AdamSteps int              `json:"adam_steps"`
}

type checkpointSize struct {
	Name string `json:"name"`
	Size int    `json:"size"`
}

type checkpoint struct {
	checkpointHeader
	blocks [4][][]float32 // weights, average, first moments, second moments
}

func encodeCheckpoint(tr *trainer, st trainState) ([]byte, error) {
	steps, m, v := tr.adam.State()
	h := checkpointHeader{State: st, AdamSteps: steps}
	w := make([][]float32, len(tr.params))
	for i, p := range tr.params {
		h.Params = append(h.Params, checkpointSize{p.Name, len(p.Data)})
		w[i] = p.Data
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(len(hj)))
	buf.Write(hj)
	for _, block := range [][][]float32{w, tr.ema, m, v} {
		for i, p := range tr.params {
			vals := make([]float32, len(p.Data)) // zeros before Adam's first step
			if block != nil {
				vals = block[i]
			}
			b := make([]byte, 4*len(vals))
			for j, x := range vals {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			buf.Write(b)
		}
	}
	binary.Write(&buf, binary.LittleEndian, crc32.Checksum(buf.Bytes(), crc32.MakeTable(crc32.Castagnoli)))
	return buf.Bytes(), nil
}

func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) < 16 || string(b[:8]) != checkpointMagic {
		return nil, errors.New("not a Faithlab training checkpoint (bad magic)")
	}
	n := len(b) - 4
	if got, want := crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)), binary.LittleEndian.Uint32(b[n:]); got != want {
		return nil, fmt.Errorf("checksum mismatch (CRC-32C %08x, the file records %08x): the checkpoint is damaged", got, want)
	}
	hl := int(binary.LittleEndian.Uint32(b[8:]))
	if hl > n-12 {
		return nil, fmt.Errorf("header of %d bytes does not fit the %d-byte file", hl, len(b))
	}
	ck := &checkpoint{}
	if err := json.Unmarshal(b[12:12+hl], &ck.checkpointHeader); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	rest := b[12+hl : n]
	total := 0
	for _, p := range ck.Params {
		if p.Size < 0 || p.Size > len(rest) {
			return nil, fmt.Errorf("parameter %s of %d values does not fit the file", p.Name, p.Size)
		}
		total += p.Size
	}
	if 16*total != len(rest) {
		return nil, fmt.Errorf("the file holds %d bytes of values, its parameters need %d", len(rest), 16*total)
	}
	off := 0
	for k := range ck.blocks {
		for _, p := range ck.Params {
			vals := make([]float32, p.Size)
			for j := range vals {
				vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(rest[off:]))
				off += 4
			}
			ck.blocks[k] = append(ck.blocks[k], vals)
		}
	}
	return ck, nil
}

// restore puts the checkpoint's weights, average and optimiser state into
// the trainer, after checking that they are the same network's.
func (ck *checkpoint) restore(tr *trainer) error {
	if len(ck.Params) != len(tr.params) {
		return fmt.Errorf("it holds %d parameters, %s has %d", len(ck.Params), tr.net.Arch(), len(tr.params))
	}
	for i, p := range tr.params {
		if ck.Params[i].Name != p.Name || ck.Params[i].Size != len(p.Data) {
			return fmt.Errorf("parameter %d is %s of %d values, %s has %s of %d", i, ck.Params[i].Name, ck.Params[i].Size, tr.net.Arch(), p.Name, len(p.Data))
		}
	}
	for i, p := range tr.params {
		copy(p.Data, ck.blocks[0][i])
		copy(tr.ema[i], ck.blocks[1][i])
	}
	if ck.AdamSteps > 0 {
		tr.adam.SetState(ck.AdamSteps, ck.blocks[2], ck.blocks[3])
	}
	return nil
}
