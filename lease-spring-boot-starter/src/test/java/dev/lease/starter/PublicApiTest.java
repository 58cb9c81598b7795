package dev.lease.starter;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;

/**
 * Every public type of the published modules, against the checked-in list {@code public-api.txt}: a type that appears
 * or disappears fails the build until the list is updated, so an API change is always deliberate and has its line in
 * CHANGELOG.md (docs/versioning.md says what a release may change). The list holds public types of internal packages
 * too: they are not a promise, but each is public for a reason, and a new one should be noticed.
 */
class PublicApiTest {

    /** The published modules with code (lease-bom and this starter have none). */
    static final Set<String> PUBLISHED = Set.of("lease-core", "lease-test", "lease-spring", "lease-zookeeper",
            "lease-redis", "lease-jdbc", "lease-kubernetes", "lease-etcd", "lease-jpa",
            "lease-spring-boot-autoconfigure", "lease-web", "lease-kafka");

    private static final Path LIST = Path.of("src/test/resources/public-api.txt");

    /** A module's main output: its target/classes in the reactor, or its jar (never its -tests.jar). */
    private static final Pattern JAR = Pattern.compile("(lease-[a-z-]+?)-\\d[^/]*?(-tests)?\\.jar");

    @Test
    void thePublicTypesAreTheListedOnes() throws IOException {
        List<String> listed = Files.readAllLines(LIST, StandardCharsets.UTF_8).stream()
                .filter(line -> !line.isBlank() && !line.startsWith("#")).toList();
        Set<String> actual = publicTypes(classpath());
        Path written = Path.of("target/public-api.actual.txt");
        Files.createDirectories(written.getParent());
        Files.write(written, actual, StandardCharsets.UTF_8);

        Set<String> added = new TreeSet<>(actual);
        listed.forEach(added::remove);
        Set<String> removed = new TreeSet<>(listed);
        removed.removeAll(actual);
        assertThat(added.isEmpty() && removed.isEmpty())
                .as("The public types of the published modules changed.%n  new: %s%n  gone: %s%nIf that is "
                        + "deliberate, copy %s over lease-spring-boot-starter/%s and add a line to CHANGELOG.md "
                        + "(Added, Changed or Removed; docs/versioning.md says what a release may change). Otherwise "
                        + "make the type package-private again.", added, removed, written.toAbsolutePath(), LIST)
                .isTrue();
    }

    @Test
    void everyPublishedModuleIsSeen() {
        Set<String> modules = new TreeSet<>();
        classpath().forEach(entry -> modules.add(entry.module()));
        assertThat(modules).as("a published module is missing from this module's test classpath")
                .containsAll(PUBLISHED);
    }

    /** The rule on a module of known types (ApiSample.java), so that a rule that stopped seeing types fails too. */
    @Test
    void aPublicTypeAndAPublicNestedTypeAreSeenAndNothingElse(@TempDir Path module) throws IOException {
        Path classes = module.resolve("lease-x/target/classes");
        Path dir = classes.resolve("dev/lease/starter");
        Files.createDirectories(dir);
        try (Stream<Path> compiled = Files.list(Path.of("target/test-classes/dev/lease/starter"))) {
            for (Path file : compiled.filter(f -> f.getFileName().toString().startsWith("ApiSample")).toList()) {
                Files.copy(file, dir.resolve(file.getFileName()));
            }
        }
        assertThat(publicTypes(List.of(new Entry("lease-x", classes)))).containsExactly(
                "lease-x dev.lease.starter.ApiSample", "lease-x dev.lease.starter.ApiSample.Nested");
    }

    /** "module fully.qualified.Name" for each public type whose enclosing types are public too. */
    static Set<String> publicTypes(List<Entry> entries) throws IOException {
        Set<String> types = new TreeSet<>();
        for (Entry entry : entries) {
            Set<String> ofModule = new TreeSet<>();
            for (JavaClass type : classes(entry.path())) {
                if (type.getPackageName().startsWith("dev.lease") && isApi(type)) {
                    ofModule.add(entry.module() + " " + type.getFullName().replace('$', '.'));
                }
            }
            // Every module with code has public types: none means the types were not read, not that there are none.
            assertThat(ofModule).as("public types read from %s", entry.path()).isNotEmpty();
            types.addAll(ofModule);
        }
        return types;
    }

    private static JavaClasses classes(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            return new ClassFileImporter().importPath(path);
        }
        try (JarFile jar = new JarFile(path.toFile())) {
            return new ClassFileImporter().importJar(jar);
        }
    }

    private static boolean isApi(JavaClass type) {
        if (type.isAnonymousClass() || type.isLocalClass() || !type.getModifiers().contains(JavaModifier.PUBLIC)) {
            return false;
        }
        return type.getEnclosingClass().map(PublicApiTest::isApi).orElse(true);
    }

    /** The main outputs of the published modules on this test's classpath. */
    static List<Entry> classpath() {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<Entry> entries = new ArrayList<>();
        for (String element : classpath.split(File.pathSeparator)) {
            Path path = Path.of(element);
            String module = null;
            Matcher jar = JAR.matcher(path.getFileName().toString());
            if (jar.matches() && jar.group(2) == null) {
                module = jar.group(1);
            }
            else if (path.endsWith(Path.of("target", "classes"))) {
                module = path.getParent().getParent().getFileName().toString();
            }
            if (module != null && PUBLISHED.contains(module)) {
                entries.add(new Entry(module, path));
            }
        }
        return entries;
    }

    record Entry(String module, Path path) {

        Entry {
            if (!Files.exists(path)) {
                throw new UncheckedIOException(new IOException(path + " does not exist"));
            }
        }
    }
}
