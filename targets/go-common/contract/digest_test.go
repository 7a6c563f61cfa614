package contract

import (
	"strings"
	"testing"
)

// Reference digests from docs/contract.md.
func TestChainDigestMatchesContractReferences(t *testing.T) {
	cases := map[int]string{
		0:    strings.Repeat("0", 64),
		1:    "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925",
		1000: "36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6",
	}
	for iters, want := range cases {
		if got := ChainDigest(iters); got != want {
			t.Errorf("ChainDigest(%d) = %s; want %s", iters, got, want)
		}
	}
}

func TestMixedDoneBody(t *testing.T) {
	response := MixedDone(ChainDigest(1), 1, 0)
	want := `{"digest":"66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925","iters":1,"waited_ms":0}`
	if string(response.Body) != want {
		t.Errorf("MixedDone body = %s; want %s", response.Body, want)
	}
}
