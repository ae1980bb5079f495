//go:build cgo && linux

package gemm

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
typedef void (*setthreads_fn)(int);
typedef int (*getthreads_fn)(void);
typedef char* (*corename_fn)(void);

static sgemm_fn fl_sgemm;
static getthreads_fn fl_getthreads;
static setthreads_fn fl_setthreads;
static corename_fn fl_corename;

// fl_load picks the core type (unless OPENBLAS_CORETYPE is set) and opens the
// library. It must run before anything else loads OpenBLAS into the process.
static int fl_load(const char* path) {
	__builtin_cpu_init();
	if (getenv("OPENBLAS_CORETYPE") == NULL && __builtin_cpu_supports("avx512f")) {
		setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 0);
	}
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return 1;
	fl_sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
	if (fl_sgemm == NULL) return 2;
	fl_getthreads = (getthreads_fn)dlsym(h, "openblas_get_num_threads");
	fl_setthreads = (setthreads_fn)dlsym(h, "openblas_set_num_threads");
	fl_corename = (corename_fn)dlsym(h, "openblas_get_corename");
	return 0;
}

static void fl_call_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
	// CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112.
	fl_sgemm(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
static int fl_threads(void) { return fl_getthreads ? fl_getthreads() : 0; }
static void fl_set_threads(int n) { if (fl_setthreads) fl_setthreads(n); }
static const char* fl_core(void) { return fl_corename ? fl_corename() : "unknown"; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// openBLAS calls cblas_sgemm of a dlopen'ed libopenblas.
type openBLAS struct{ core string }

// The C side keeps the function pointers of the one library a process can hold,
// so loading happens once; what it found is remembered with it.
var loadOnce = sync.OnceValues(func() (Kernel, error) {
	var lastErr error
	for _, p := range []string{"libopenblas.so.0", "libopenblas.so"} {
		cs := C.CString(p)
		rc := C.fl_load(cs)
		C.free(unsafe.Pointer(cs))
		switch rc {
		case 0:
			return openBLAS{core: C.GoString(C.fl_core())}, nil
		case 1:
			lastErr = fmt.Errorf("dlopen %s: %s", p, C.GoString(C.dlerror()))
		default:
			lastErr = fmt.Errorf("%s has no cblas_sgemm", p)
		}
	}
	return nil, fmt.Errorf("openblas not available: %w", lastErr)
})

// LoadOpenBLAS loads Debian's libopenblas at run time. It requests the
// SKYLAKEX core type on CPUs with AVX-512 unless OPENBLAS_CORETYPE is set.
func LoadOpenBLAS() (Kernel, error) { return loadOnce() }

// SetThreads sets OpenBLAS's thread count where it is loaded.
func SetThreads(n int) { C.fl_set_threads(C.int(n)) }

// Sgemm implements Kernel.
func (o openBLAS) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	checkSizes(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	C.fl_call_sgemm(cbool(transA), cbool(transB), C.int(m), C.int(n), C.int(k), C.float(alpha),
		ptr(a), C.int(lda), ptr(b), C.int(ldb), C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// Name implements Kernel.
func (o openBLAS) Name() string {
	if n := int(C.fl_threads()); n != 1 {
		return fmt.Sprintf("openblas %s (%d threads)", o.core, n)
	}
	return fmt.Sprintf("openblas %s (1 thread)", o.core)
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func ptr(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}
