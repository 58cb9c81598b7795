package dev.lease.autoconfigure.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The library's modules as source directories: the rules ArchUnit cannot see in class files (how long a source file
 * is, which module a test lives in). A library module is a {@code lease-*} directory with main sources; modules made
 * of tests only (the fault suite) have no code of their own to sit beside.
 */
record SourceTree(Path root) {

    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)", Pattern.MULTILINE);

    /** The checkout this module is built in. */
    static SourceTree ofBuild() {
        return new SourceTree(Path.of("..").toAbsolutePath().normalize());
    }

    /** Every main source file of the library longer than {@code maxLines}, with its length. */
    List<String> mainSourcesLongerThan(int maxLines) {
        List<String> tooLong = new ArrayList<>();
        for (Path module : modules()) {
            for (Path source : sources(module, "main")) {
                long lines = lines(source);
                if (lines > maxLines) {
                    tooLong.add(root.relativize(source) + " has " + lines + " lines");
                }
            }
        }
        return tooLong;
    }

    /** Every test source whose package is none of its module's main packages, nor inside one of them. */
    List<String> testsOutsideTheirModule() {
        List<String> astray = new ArrayList<>();
        for (Path module : modules()) {
            Set<String> own = new TreeSet<>();
            sources(module, "main").forEach(source -> own.add(packageOf(source)));
            for (Path test : sources(module, "test")) {
                String pkg = packageOf(test);
                if (own.stream().noneMatch(p -> pkg.equals(p) || pkg.startsWith(p + "."))) {
                    astray.add(root.relativize(test) + " is in package " + pkg + ", none of " + module.getFileName()
                            + "'s " + own);
                }
            }
        }
        return astray;
    }

    private List<Path> modules() {
        try (Stream<Path> dirs = Files.list(root)) {
            return dirs.filter(dir -> dir.getFileName().toString().startsWith("lease-"))
                    .filter(dir -> !sources(dir, "main").isEmpty()).sorted().toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static List<Path> sources(Path module, String set) {
        List<Path> sources = new ArrayList<>();
        for (String language : List.of("java", "kotlin")) {
            Path dir = module.resolve("src").resolve(set).resolve(language);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                files.filter(f -> f.toString().endsWith(".java") || f.toString().endsWith(".kt"))
                        .sorted().forEach(sources::add);
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return sources;
    }

    private static String packageOf(Path source) {
        Matcher declared = PACKAGE.matcher(read(source));
        if (!declared.find()) {
            throw new IllegalStateException(source + " declares no package");
        }
        return declared.group(1);
    }

    private static long lines(Path source) {
        return read(source).lines().count();
    }

    private static String read(Path source) {
        try {
            return Files.readString(source);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
