package dev.lease.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Finds classes of the library that touch an optional dependency an application may lack, on a path Spring may take
 * without checking it is there: the bug class of a plain MVC service failing with {@code NoClassDefFoundError} for
 * spring-tx, which a {@code FilteredClassLoader} cannot show (the JVM still links the hidden class).
 *
 * <p>Reads the bytecode of every {@code dev.lease} class on this JVM's class path, starting from the
 * auto-configurations and {@code spring.factories} entries, and follows the classes each one may make the JVM load
 * (super types, field and method descriptors, lambda methods included, the types its code names), its member classes
 * and the classes its annotations name. A class's {@code @ConditionalOnClass} proves the named classes' artifacts (and what they depend
 * on) are present on every path through it. An artifact "may be absent" when a {@code dev.lease} module declares it
 * optional (or provided) and no module requires it, nor anything they require. A class that may load a class of such
 * an artifact, reached on a path that did not prove it present, is a violation; so is a class that is on no class
 * path at all. A class that guards itself at run time ({@code ClassUtils.isPresent}) is named with the artifact it
 * checks in {@code runtimeGuards}.
 */
public final class OptionalDependencyScan {

    /**
     * A class that may load a class of an artifact an application may lack, on a path that never proved it present.
     *
     * @param type the library class
     * @param loaded the class it may load
     * @param artifact {@code groupId:artifactId} of {@code loaded}, or "not on the class path"
     * @param path how Spring gets to {@code type} from an auto-configuration
     */
    public record Violation(String type, String loaded, String artifact, String path) {

        @Override
        public String toString() {
            return type + " loads " + loaded + " (" + artifact + ", which an application may lack) on a path that "
                    + "never checks it is present: " + path;
        }
    }

    private static final String IMPORTS =
            "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

    private final Map<String, ClassReferences> library = new HashMap<>();
    private final Map<String, String> classArtifact = new HashMap<>();
    private final Map<String, Set<String>> requires = new HashMap<>();
    private final Set<String> mayBeAbsent = new TreeSet<>();
    private final Set<String> entryPoints = new TreeSet<>();
    private final ClassLoader loader = OptionalDependencyScan.class.getClassLoader();

    private OptionalDependencyScan() {
    }

    /**
     * Scans this JVM's class path (a module's test class path holds its optional dependencies).
     *
     * @param runtimeGuards classes that are used only after a run-time check that an artifact
     *        ({@code groupId:artifactId}; several separated by commas) is present, mapped to that artifact
     * @return the violations, each naming the class, what it loads, the artifact and the path Spring takes to it
     */
    public static List<Violation> violations(Map<String, String> runtimeGuards) {
        try {
            OptionalDependencyScan scan = new OptionalDependencyScan();
            scan.index(MavenCoordinates.classPath());
            return scan.walk(runtimeGuards);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void index(List<Path> classPath) throws IOException {
        Map<String, Path> jars = new HashMap<>();
        Set<String> optional = new HashSet<>();
        Set<String> required = new HashSet<>();
        for (Path entry : classPath) {
            MavenCoordinates coordinates = MavenCoordinates.of(entry);
            if (coordinates == null) {
                continue;
            }
            requires.put(coordinates.id(), new HashSet<>(coordinates.dependencies().stream()
                    .filter(d -> !d.optional()).map(MavenCoordinates.Dependency::id).toList()));
            if (coordinates.id().startsWith("dev.lease:") && MavenCoordinates.isModuleOutput(entry)) {
                required.add(coordinates.id());
                coordinates.dependencies().forEach(d -> (d.optional() ? optional : required).add(d.id()));
                readLibrary(entry);
            }
            else if (!Files.isDirectory(entry)) {
                jars.put(coordinates.id(), entry);
            }
        }
        Set<String> present = closure(required);
        for (String artifact : closure(optional)) {
            if (!present.contains(artifact)) {
                mayBeAbsent.add(artifact);
                Path jar = jars.get(artifact);
                if (jar != null) {
                    try (JarFile file = new JarFile(jar.toFile())) {
                        file.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class"))
                                .forEach(n -> classArtifact.put(n.substring(0, n.length() - 6).replace('/', '.'),
                                        artifact));
                    }
                }
            }
        }
    }

    private Set<String> closure(Set<String> artifacts) {
        Set<String> all = new HashSet<>();
        Deque<String> todo = new ArrayDeque<>(artifacts);
        while (!todo.isEmpty()) {
            String next = todo.pop();
            if (all.add(next)) {
                todo.addAll(requires.getOrDefault(next, Set.of()));
            }
        }
        return all;
    }

    private void readLibrary(Path output) throws IOException {
        if (Files.isDirectory(output)) {
            readLibraryFiles(output);
        }
        else {
            try (var jar = java.nio.file.FileSystems.newFileSystem(output)) {
                readLibraryFiles(jar.getPath("/"));
            }
        }
    }

    private void readLibraryFiles(Path classes) throws IOException {
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    ClassReferences refs = ClassReferences.read(in);
                    library.put(refs.name(), refs);
                }
            }
        }
        Path imports = classes.resolve(IMPORTS);
        if (Files.isRegularFile(imports)) {
            Files.readAllLines(imports).stream().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .forEach(entryPoints::add);
        }
        Path factories = classes.resolve("META-INF/spring.factories");
        if (Files.isRegularFile(factories)) {
            Properties properties = new Properties();
            try (InputStream in = Files.newInputStream(factories)) {
                properties.load(in);
            }
            properties.values().forEach(v -> Stream.of(v.toString().split(",")).map(String::trim)
                    .filter(c -> c.startsWith("dev.lease.")).forEach(entryPoints::add));
        }
    }

    /** One step of the walk: a class, the artifacts proven present on the way to it, and the way. */
    private record Step(String type, Set<String> proven, Step from) {

        String path() {
            return (from == null ? "" : from.path() + " -> ") + type.substring(type.lastIndexOf('.') + 1);
        }
    }

    private List<Violation> walk(Map<String, String> runtimeGuards) {
        for (String guarded : runtimeGuards.keySet()) {
            if (!library.containsKey(guarded)) {
                throw new IllegalArgumentException("runtime guard " + guarded + " is no class of the library");
            }
        }
        Map<String, Violation> violations = new java.util.LinkedHashMap<>();
        Map<String, List<Set<String>>> seen = new HashMap<>();
        Deque<Step> todo = new ArrayDeque<>();
        // Auto-configurations and spring.factories entries are read by Boot: it is there.
        String boot = classArtifact.get("org.springframework.boot.autoconfigure.AutoConfiguration");
        Set<String> start = boot == null ? Set.of() : closure(Set.of(boot));
        entryPoints.stream().filter(library::containsKey).forEach(e -> todo.add(enter(e, start, null, runtimeGuards)));
        while (!todo.isEmpty()) {
            Step step = todo.pop();
            List<Set<String>> before = seen.computeIfAbsent(step.type(), t -> new ArrayList<>());
            if (before.stream().anyMatch(step.proven()::containsAll)) {
                continue;
            }
            before.add(step.proven());
            ClassReferences refs = library.get(step.type());
            for (String loaded : refs.loads()) {
                if (library.containsKey(loaded)) {
                    todo.add(enter(loaded, step.proven(), step, runtimeGuards));
                    continue;
                }
                String artifact = artifactOf(loaded);
                if (artifact != null && !step.proven().contains(artifact)
                        && !step.proven().contains(packageOf(loaded))) {
                    violations.putIfAbsent(step.type() + " " + loaded,
                            new Violation(step.type(), loaded, artifact, step.path()));
                }
            }
            refs.annotated().stream().filter(library::containsKey)
                    .forEach(a -> todo.add(enter(a, step.proven(), step, runtimeGuards)));
        }
        return new ArrayList<>(violations.values());
    }

    private Step enter(String type, Set<String> proven, Step from, Map<String, String> runtimeGuards) {
        Set<String> now = new HashSet<>(proven);
        for (String required : library.get(type).conditionalOnClass()) {
            String artifact = classArtifact.get(required);
            if (artifact != null) {
                now.addAll(closure(Set.of(artifact)));
            }
            else if (artifactOf(required) != null) {
                now.add(packageOf(required));
            }
        }
        String guard = runtimeGuards.get(type);
        if (guard != null) {
            now.addAll(closure(Set.of(guard.split(","))));
        }
        return new Step(type, now, from);
    }

    /** Stands for a class that is on no class path here, which a {@code @ConditionalOnClass} proves present. */
    private static String packageOf(String type) {
        return "package " + type.substring(0, Math.max(0, type.lastIndexOf('.')));
    }

    /** The absent-able artifact of {@code type}, "not on the class path" when no class path has it, else null. */
    private String artifactOf(String type) {
        String artifact = classArtifact.get(type);
        if (artifact != null) {
            return artifact;
        }
        if (type.startsWith("java.") || loader.getResource(type.replace('.', '/') + ".class") != null) {
            return null;
        }
        return "not on the class path";
    }
}
