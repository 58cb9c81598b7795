package dev.lease.faults.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;

/**
 * Wall-clock jumps for a child JVM with Debian's {@code faketime} package: libfaketime is preloaded and reads the
 * offset from a file on every call, so the parent can move the child's wall clock while it runs. The monotonic
 * clock is left alone ({@code FAKETIME_DONT_FAKE_MONOTONIC}), which is the point: the engine must not care about
 * the wall clock at all.
 */
public final class Faketime {

    private static final List<String> LIBRARY_DIRS = List.of("/usr/lib/x86_64-linux-gnu/faketime",
            "/usr/lib/aarch64-linux-gnu/faketime", "/usr/lib/faketime", "/usr/local/lib/faketime");

    private Faketime() {
    }

    /** Skips the calling test, with the fix, when libfaketime is not installed. */
    public static Path requireLibrary() {
        Optional<Path> library = LIBRARY_DIRS.stream().map(dir -> Path.of(dir, "libfaketime.so.1"))
                .filter(Files::isReadable).findFirst();
        Assumptions.assumeTrue(library.isPresent(), "libfaketime is not installed, so wall-clock jumps cannot be "
                + "injected: install it with 'apt-get install -y faketime' (.ci/run does) to run this scenario");
        return library.get();
    }

    /** The environment of a child whose wall clock follows the offset written in {@code offsetFile}. */
    public static Map<String, String> environment(Path library, Path offsetFile) {
        return Map.of("LD_PRELOAD", library.toString(), "FAKETIME_TIMESTAMP_FILE", offsetFile.toAbsolutePath().toString(),
                "FAKETIME_CACHE_DURATION", "1", "FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }

    /** Sets the offset, such as {@code +5m}, {@code -5m} or {@code +0}. */
    public static void set(Path offsetFile, String offset) throws IOException {
        Path tmp = offsetFile.resolveSibling(offsetFile.getFileName() + ".tmp");
        Files.writeString(tmp, offset + "\n");
        Files.move(tmp, offsetFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
