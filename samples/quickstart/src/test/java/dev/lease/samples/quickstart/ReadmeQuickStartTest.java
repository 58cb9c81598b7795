package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The README's quick start, as a newcomer would take it: every block marked {@code <!-- file: path -->} is copied into
 * a fresh project, its Java compiled against this module's dependencies (which must be exactly the ones the README
 * lists) without any class of this repository's own, and the application run in a class loader of its own. It must
 * start, run its ten deposits to a balance of 1000, and take a deposit through the {@code @Transactional} facade of
 * "Common setups".
 */
class ReadmeQuickStartTest {

    @Test
    void theQuickStartCompilesAndRunsAsShown(@TempDir Path project) throws Exception {
        Path root = MarkdownBlocks.root();
        List<MarkdownBlocks.Block> files = MarkdownBlocks.of(root.resolve("README.md")).stream()
                .filter(b -> b.kind().equals("file")).toList();
        assertThat(files).extracting(MarkdownBlocks.Block::path).as("files the README's quick start shows")
                .contains("pom-dependencies.xml", "src/main/resources/application.yml", "src/main/resources/schema.sql")
                .anyMatch(path -> path.endsWith("Application.java"));

        MarkdownBlocks.Block dependencies = files.stream().filter(b -> b.path().equals("pom-dependencies.xml"))
                .findFirst().orElseThrow();
        assertThat(dependencies(dependencies.text()))
                .as("the dependencies the README lists, against those samples/quickstart is built with")
                .isEqualTo(pomDependencies(root.resolve("samples/quickstart/pom.xml")));

        List<Path> sources = new ArrayList<>();
        for (MarkdownBlocks.Block file : files) {
            Path target = project.resolve(file.path()).normalize();
            assertThat(target.startsWith(project)).as("%s stays inside the project", file.path()).isTrue();
            Files.createDirectories(target.getParent());
            Files.writeString(target, file.text());
            if (file.path().endsWith(".java")) {
                sources.add(target);
            }
        }
        Path classes = Files.createDirectories(project.resolve("target/classes"));
        List<Path> classpath = dependencyClasspath();
        compile(sources, classpath, classes);

        List<URL> urls = new ArrayList<>(List.of(classes.toUri().toURL(), project.resolve("src/main/resources").toUri().toURL()));
        for (Path entry : classpath) {
            urls.add(entry.toUri().toURL());
        }
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Thread.currentThread().setContextClassLoader(loader);
            Class<?> application = loader.loadClass(mainClass(project, sources));
            Object context = loader.loadClass("org.springframework.boot.SpringApplication")
                    .getMethod("run", Class.class, String[].class)
                    .invoke(null, application, new String[] {"--spring.main.banner-mode=off"});
            try {
                Object accounts = bean(context, loader, "com.example.accounts.Accounts");
                Method balance = accounts.getClass().getMethod("balance", long.class);
                assertThat(balance.invoke(accounts, 1L)).as("balance after the ten deposits of the runner").isEqualTo(1000L);
                Object transfers = bean(context, loader, "com.example.accounts.Transfers");
                transfers.getClass().getMethod("payIn", long.class, long.class).invoke(transfers, 1L, 100L);
                assertThat(balance.invoke(accounts, 1L)).as("balance after a deposit through the facade").isEqualTo(1100L);
            }
            finally {
                context.getClass().getMethod("close").invoke(context);
            }
        }
        finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    private static Object bean(Object context, ClassLoader loader, String type) throws Exception {
        return context.getClass().getMethod("getBean", Class.class).invoke(context, loader.loadClass(type));
    }

    private static void compile(List<Path> sources, List<Path> classpath, Path classes) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> arguments = new ArrayList<>(List.of("-d", classes.toString(), "-parameters", "-proc:none",
                "-classpath", classpath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator))));
        sources.forEach(source -> arguments.add(source.toString()));
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, arguments.toArray(String[]::new));
        assertThat(status).as("javac on the README's quick start:%n%s", errors.toString(StandardCharsets.UTF_8))
                .isZero();
    }

    /** The test class path minus this module's own classes: what the listed dependencies bring. */
    private static List<Path> dependencyClasspath() {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path module = Path.of("").toAbsolutePath().resolve("target");
        List<Path> entries = new ArrayList<>();
        for (String entry : classpath.split(File.pathSeparator)) {
            Path path = Path.of(entry).toAbsolutePath();
            if (!entry.isBlank() && !path.startsWith(module)) {
                entries.add(path);
            }
        }
        assertThat(entries).as("dependency class path").anyMatch(p -> p.getFileName().toString().startsWith("lease-spring-boot-starter")
                || p.toString().contains("lease-spring-boot-autoconfigure"));
        return entries;
    }

    private static String mainClass(Path project, List<Path> sources) throws IOException {
        for (Path source : sources) {
            if (Files.readString(source).contains("public static void main(")) {
                Path relative = project.resolve("src/main/java").relativize(source);
                return relative.toString().replace(File.separatorChar, '.').replaceAll("\\.java$", "");
            }
        }
        throw new AssertionError("no class with a main method among " + sources);
    }

    /** The coordinates of {@code pom}'s own dependencies, test-scoped ones left out. */
    private static Set<String> pomDependencies(Path pom) throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile()).getDocumentElement();
        for (Node node = project.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals("dependencies")) {
                Set<String> coordinates = coordinates(element);
                coordinates.removeIf(coordinate -> coordinate.endsWith(":test"));
                return coordinates;
            }
        }
        throw new AssertionError(pom + " has no dependencies");
    }

    /** {@code groupId:artifactId:scope} of each dependency in a run of {@code <dependency>} elements. */
    private static Set<String> dependencies(String xml) throws Exception {
        return coordinates(DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(("<dependencies>" + xml + "</dependencies>").getBytes(StandardCharsets.UTF_8)))
                .getDocumentElement());
    }

    private static Set<String> coordinates(Element dependencies) {
        Set<String> coordinates = new TreeSet<>();
        NodeList children = dependencies.getElementsByTagName("dependency");
        for (int i = 0; i < children.getLength(); i++) {
            Element dependency = (Element) children.item(i);
            String scope = text(dependency, "scope");
            coordinates.add(text(dependency, "groupId") + ":" + text(dependency, "artifactId") + ":"
                    + (scope == null ? "compile" : scope));
        }
        return coordinates;
    }

    private static String text(Element parent, String tag) {
        NodeList nodes = parent.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? null : nodes.item(0).getTextContent().trim();
    }
}
