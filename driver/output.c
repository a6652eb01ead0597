/* output.c: how gpuc writes what -o names (--emit text, executables, the
 * library's files, tuning files), the way `cc -o` does. Everything is first
 * written to a temporary file, so a failed compile leaves no partial output
 * and does not touch an existing one. When it is complete:
 *   - a regular file, or nothing yet, at PATH: the temporary (made next to
 *     PATH) gets the mode a new file gets (0666, or 0777 for an executable,
 *     minus the umask, as gcc gives) and is renamed over PATH, atomically;
 *   - anything else (a character or block device such as /dev/null, a FIFO,
 *     a symbolic link such as /dev/stdout): its contents are written into
 *     PATH in place, so the device, FIFO or link stays what it was;
 *   - a directory or a socket: refused, before any work;
 *   - `-`: standard output, for text only.
 * Used by driver/main.c (--emit), build_exe.c and tune_cmd.c. */
#define _XOPEN_SOURCE 700 /* mkstemp, fdopen, lstat */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

static const char *kind_name(DrvOutputKind kind)
{
    switch (kind) {
    case DRV_OUTPUT_TEXT:
        return "text";
    case DRV_OUTPUT_BINARY:
        return "a library";
    case DRV_OUTPUT_EXECUTABLE:
        return "an executable";
    }
    return "output";
}

/* The mode a new file of this kind gets: like cc -o, from the umask. */
static mode_t new_file_mode(DrvOutputKind kind)
{
    mode_t mask = umask(0);
    umask(mask);
    return (kind == DRV_OUTPUT_EXECUTABLE ? 0777 : 0666) & ~mask;
}

/* Is PATH replaced by renaming (a regular file, or nothing there yet)? */
static bool renamed_into_place(const char *path)
{
    struct stat st;
    return lstat(path, &st) != 0 || S_ISREG(st.st_mode);
}

int drv_output_check(const char *path, DrvOutputKind kind)
{
    if (strcmp(path, "-") == 0) {
        if (kind != DRV_OUTPUT_TEXT) {
            fprintf(stderr, "gpuc: error: -o -: %s cannot be written to standard output; name a file\n",
                    kind_name(kind));
            return 1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "gpuc: error: cannot write '%s': it is a directory\n", path);
            return 1;
        }
        if (S_ISSOCK(st.st_mode)) {
            fprintf(stderr, "gpuc: error: cannot write '%s': it is a socket\n", path);
            return 1;
        }
    }
    return 0;
}

bool drv_output_same_file(const char *output, const char *input)
{
    struct stat so, si;
    return output && input && strcmp(output, "-") != 0 && stat(output, &so) == 0 && stat(input, &si) == 0 &&
           S_ISREG(so.st_mode) && so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

int drv_output_open(DrvOutput *o, const char *path, DrvOutputKind kind)
{
    *o = (DrvOutput){ .path = path, .kind = kind };
    if (!path || strcmp(path, "-") == 0) {
        if (path && drv_output_check(path, kind) != 0) {
            return 1;
        }
        o->f = stdout;
        return 0;
    }
    if (drv_output_check(path, kind) != 0) {
        return 1;
    }
    /* next to PATH, so the rename is atomic; elsewhere when PATH is a device */
    if (renamed_into_place(path)) {
        o->tmp = malloc(strlen(path) + sizeof ".tmp.XXXXXX");
        if (o->tmp) {
            sprintf(o->tmp, "%s.tmp.XXXXXX", path);
        }
    } else {
        const char *dir = getenv("TMPDIR");
        dir = dir && *dir ? dir : "/tmp";
        o->tmp = malloc(strlen(dir) + sizeof "/gpuc-out-XXXXXX");
        if (o->tmp) {
            sprintf(o->tmp, "%s/gpuc-out-XXXXXX", dir);
        }
    }
    int fd = o->tmp ? mkstemp(o->tmp) : -1;
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        return 1;
    }
    return 0;
}

/* Copy the file `from` into `to` (opened, not replaced), then remove `from`. */
static int copy_in_place(const char *from, const char *to, DrvOutputKind kind)
{
    int in = open(from, O_RDONLY);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC, new_file_mode(kind));
    bool ok = in >= 0 && out >= 0;
    const char *failed = strerror(errno);
    char buf[1 << 16];
    ssize_t n = 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t done = 0; ok && done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            ok = w > 0;
            done += w > 0 ? w : 0;
        }
        failed = ok ? failed : strerror(errno);
    }
    if (n < 0) {
        ok = false;
        failed = strerror(errno);
    }
    /* an executable written through a link into a regular file can be run */
    struct stat st;
    if (ok && kind == DRV_OUTPUT_EXECUTABLE && fstat(out, &st) == 0 && S_ISREG(st.st_mode)) {
        fchmod(out, st.st_mode | (new_file_mode(kind) & 0111));
    }
    if (out >= 0 && close(out) != 0 && ok) {
        ok = false;
        failed = strerror(errno);
    }
    if (in >= 0) {
        close(in);
    }
    if (!ok) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", to, failed);
    }
    unlink(from);
    return ok ? 0 : 1;
}

int drv_output_install(const char *tmp, const char *path, DrvOutputKind kind)
{
    if (!renamed_into_place(path)) {
        return copy_in_place(tmp, path, kind);
    }
    if (chmod(tmp, new_file_mode(kind)) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}

bool drv_output_close(DrvOutput *o, bool ok)
{
    if (!o->tmp) {
        return o->f && fflush(o->f) == 0 && ok;
    }
    if (fclose(o->f) != 0 && ok) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", o->path, strerror(errno));
        ok = false;
    }
    if (ok) {
        ok = drv_output_install(o->tmp, o->path, o->kind) == 0;
    } else {
        unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    o->f = NULL;
    return ok;
}
