package herd

import "testing"

// splitResult takes only the daemon's success layout; everything else is left to the decoder.
func TestSplitResult(t *testing.T) {
	var r rpcResponse
	if !splitResult([]byte(`{"jsonrpc":"2.0","id":12,"result":{"a":[1]}}`+"\n"), &r) || string(r.ID) != "12" || string(r.Result) != `{"a":[1]}` {
		t.Fatalf("success line: %+v", r)
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"event","params":{}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":true}`,
		`{"id":4,"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":}`,
		`{"jsonrpc":"2.0","id":`,
		``,
	} {
		var r rpcResponse
		if splitResult([]byte(line), &r) {
			t.Errorf("%q taken as a success: %+v", line, r)
		}
	}
}
