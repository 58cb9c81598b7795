package dev.lease.faults.checker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/**
 * Result files that several surefire forks write at once. The suite runs its classes in parallel forks (and, under
 * {@code -Psoak}, mutants in executions of their own), so no fork holds every row: each scenario's row is a file of
 * its own under a directory of this build ({@code lease-test.run-id}, set by the pom to the build's timestamp), and
 * the tables are rebuilt from all of them, one fork at a time. Rows of an earlier build never leak into this build's
 * tables.
 */
public final class RunFiles {

    private static final String RUN_ID = System.getProperty("lease-test.run-id", "local");

    private RunFiles() {
    }

    /** This build's directory for one kind of row, such as {@code target/fault-results/<run>/}. */
    public static Path rows(String table) {
        return Path.of("target", table, RUN_ID.replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /** Writes one row file, replacing it whole, so a reader in another fork never sees half of it. */
    public static void write(Path file, String content) {
        try {
            Files.createDirectories(file.getParent());
            Path partial = Files.createTempFile(file.getParent(), ".partial-", ".tmp");
            Files.writeString(partial, content);
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Runs {@code work} while holding this build's file lock on {@code dir}: forks that write a row and rebuild the
     * table from every row take turns, or one that listed the rows before another wrote its own could write the table
     * last, without that row. Callers are {@code synchronized}: a JVM may hold a file lock only once.
     */
    public static void exclusively(Path dir, Runnable work) {
        try {
            Files.createDirectories(dir);
            try (FileChannel channel = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                    FileLock lock = channel.lock()) {
                work.run();
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** The row files under {@code dir} whose names end with {@code suffix}, sorted by name. */
    public static List<Path> list(Path dir, String suffix) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(suffix)).filter(Files::isRegularFile)
                    .sorted().toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** A file name for a scenario (scenario names are ours, but keep them inside the directory anyway). */
    public static String fileName(String scenario) {
        return scenario.replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
