#!/usr/bin/env bash
# check_purity.sh — proves the firmware library keeps the firmware rules: no OS/libc services, no mutable globals.
#
# Usage: check_purity.sh [--sanitize] NM LIBRARY.a
#   NM         the toolchain's nm (CMAKE_NM)
#   --sanitize the library was built with -fsanitize=address,undefined: accept the data and
#              symbols the sanitizers add (__asan_*, __ubsan_*, __odr_asan*)
#
# The engine must run unchanged on a bare-metal board: every platform service comes in through
# the HAL or the injected allocator (DESIGN.md, firmware/). This reads the symbol table of every
# object in the archive and fails, naming object and symbol, if an object
#   1. references a forbidden function or object (list below), or
#   2. defines writable data: a symbol in .data/.bss/.tdata/.tbss or COMMON, i.e. a mutable
#      global or a static variable. `const` tables are fine, including tables of pointers that
#      -fPIC places in .data.rel.ro (read-only after relocation; flash on a board).
# Allowed although libc provides them: memcpy, memset, memmove, memcmp (compilers emit calls to
# them for struct copies and loops, freestanding or not). Also allowed: compiler support
# routines (__udivti3, ...), coverage/profiling (__gcov*, __llvm_*, __prof*), and with
# --sanitize the sanitizer runtimes.
set -euo pipefail

sanitize=0
if [[ ${1:-} == --sanitize ]]; then
    sanitize=1
    shift
fi
if [[ $# -ne 2 ]]; then
    echo "usage: $0 [--sanitize] NM LIBRARY.a" >&2
    exit 2
fi
nm_tool=$1
lib=$2
if [[ ! -f $lib ]]; then
    echo "firmware_purity: $lib does not exist (build ncl_core first)" >&2
    exit 2
fi

# Forbidden references, as anchored extended regexes, by reason. Fortified (-D_FORTIFY_SOURCE)
# and C99-scanf aliases are listed with their plain names.
forbidden=(
    # heap: memory comes only from the injected allocator (ncl_config.alloc/free)
    'malloc|calloc|realloc|reallocarray|free|aligned_alloc|posix_memalign|memalign|valloc|pvalloc'
    'strdup|strndup|sbrk|brk|mmap|munmap|mprotect'
    # stdio: no console or files on a board; logging goes through the HAL's log op
    '(v|f|vf|s|vs|sn|vsn|d|vd|as|vas)?printf|__(v|f|vf|s|vs|sn|vsn|d|vd|as|vas)?printf_chk'
    '(v|f|vf|s|vs)?scanf|__isoc99_.*|puts|fputs|putchar|fputc|putc|getchar|fgetc|getc|gets|fgets|getline'
    'fopen|fdopen|freopen|fclose|fread|fwrite|fflush|fseek|ftell|rewind|setvbuf|setbuf|perror|tmpfile|remove|rename'
    'stdin|stdout|stderr|_IO_.*'
    # process control: a library never ends the program (STYLE.md); assert() calls abort
    'exit|_exit|_Exit|abort|atexit|at_quick_exit|quick_exit|__assert_fail|__assert_perror_fail|__assert'
    'raise|signal|sigaction|kill|fork|vfork|execve|execv|execvp|execl|execlp|system|popen|pclose|wait|waitpid|longjmp|_longjmp|siglongjmp'
    # time: the clock comes from the HAL (now_ns), which is simulated time on the sim backend
    'time|clock|clock_gettime|clock_nanosleep|gettimeofday|nanosleep|usleep|sleep|localtime|localtime_r|gmtime|gmtime_r|mktime|strftime|ctime|times'
    # threads and locks: concurrency belongs to the backend, the engine is re-entrant per communicator
    'pthread_.*|sem_.*|thrd_.*|mtx_.*|cnd_.*|tss_.*|call_once|sched_yield'
    # OS and environment: no system calls, no configuration from the environment
    'getenv|secure_getenv|setenv|unsetenv|putenv|open|open64|openat|creat|close|read|write|pread|pwrite|lseek|ioctl|fcntl'
    'stat|fstat|lstat|stat64|fstat64|access|unlink|mkdir|rmdir|opendir|readdir|closedir|getpid|getuid|syscall|dlopen|dlsym|dlclose'
    'socket|connect|bind|listen|accept|send|recv|sendto|recvfrom|sendmsg|recvmsg|select|poll|epoll_.*|shutdown'
    # hidden global or thread state: not re-entrant, or OS state (errno)
    'rand|srand|random|srandom|rand_r|strtok|strerror|setlocale|localeconv|__errno_location|errno'
)
forbidden_re="^($(IFS='|'; echo "${forbidden[*]}"))$"

# Symbols that tools add to an instrumented build (allowed undefined or as writable data).
tool_re='^(__gcov|__llvm_|__prof|_GLOBAL_OFFSET_TABLE_$|__stack_chk_)'
if [[ $sanitize == 1 ]]; then
    tool_re='^(__gcov|__llvm_|__prof|_GLOBAL_OFFSET_TABLE_$|__stack_chk_|__asan|__ubsan|__odr_asan|__sanitizer|__lsan)'
fi

table=$(LC_ALL=C "$nm_tool" --format=sysv "$lib") || {
    echo "firmware_purity: $nm_tool could not read $lib" >&2
    exit 2
}

# sysv format: "Symbols from lib.a[obj.o]:" headers, then rows "name|value|class|type|size|line|section".
LC_ALL=C awk -v forbidden="$forbidden_re" -v tool="$tool_re" -v lib="$lib" '
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
/^Symbols from / {
    obj = $0
    sub(/^Symbols from [^[]*\[/, "", obj); sub(/\]:$/, "", obj)
    objects[obj] = 1
    next
}
index($0, "|") == 0 { next }
{
    n = split($0, f, "|")
    name = trim(f[1]); class = trim(f[3]); section = trim(f[n])
    if (name == "Name" || name == "") next
    base = name; sub(/@.*/, "", base)
    if (class == "U") {
        undefined[base] = undefined[base] " " obj
        if (base ~ forbidden) {
            printf "firmware_purity: %s: %s references forbidden symbol %s\n", lib, obj, base
            bad++
        }
        next
    }
    if (class != "w" && class != "v") defined[base] = 1
    writable = (section ~ /^\.(data|bss|tdata|tbss|sdata|sbss)(\.|$)/ && section !~ /^\.data\.rel\.ro/) \
               || section == "*COM*" || class == "C"
    if (writable && base !~ tool) {
        printf "firmware_purity: %s: %s defines writable data %s (nm class %s, section %s): " \
               "make it const, or move the state into the communicator\n", lib, obj, base, class, section
        bad++
    }
}
END {
    nobj = 0; for (o in objects) nobj++
    if (nobj == 0) { printf "firmware_purity: %s holds no objects\n", lib; exit 1 }
    if (bad) {
        printf "firmware_purity: FAILED: %d violation(s) in %s\n", bad, lib
        exit 1
    }
    printf "firmware_purity: %s: %d objects clean; external references:\n", lib, nobj
    fflush()
    for (s in undefined) if (!(s in defined) && s !~ tool) print "  " s | "sort"
    close("sort")
}' <<<"$table"
