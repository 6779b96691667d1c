package snapshot

import (
	"reflect"
	"testing"
)

func TestKeyRoundTrip(t *testing.T) {
	for _, k := range [][]string{
		nil,
		{"1"},
		{"\x80\x00\xff\x9d", "é😀", ""},
		{"a\"b\\c", "\n"},
	} {
		if got := DecodeKey(EncodeKey(k)); !reflect.DeepEqual(got, k) {
			t.Errorf("key %q came back as %q", k, got)
		}
	}
}
