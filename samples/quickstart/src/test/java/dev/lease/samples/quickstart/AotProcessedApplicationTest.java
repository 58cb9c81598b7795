package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quick start as a Spring Boot team building a native image runs it: processed ahead of time by Boot's AOT engine
 * (what {@code spring-boot:process-aot} runs), its generated sources compiled, then started with
 * {@code -Dspring.aot.enabled=true} in a JVM of its own, where it must take its leases and fence its writes (ten
 * concurrent leased, fenced deposits end at 1000; a revoked lease interrupts its holder). The starter's
 * {@code RuntimeHints} are part of what the processing writes for native-image ({@code META-INF/native-image}).
 */
class AotProcessedApplicationTest {

    private static final String MAIN = QuickstartApplication.class.getName();

    /** The one knob for slow machines that every wait of the build's tests is multiplied by. */
    private static final long TIME_FACTOR = Long.getLong("lease-test.time-factor", 1);

    @Test
    void theAotProcessedApplicationTakesLeasesAndFencesItsWrites(@TempDir Path work) throws Exception {
        Path sources = work.resolve("sources");
        Path resources = work.resolve("resources");
        Path classes = work.resolve("classes");
        List<Path> classpath = applicationClasspath();

        Run processing = java(classpath, List.of(), "org.springframework.boot.SpringApplicationAotProcessor", MAIN,
                sources.toString(), resources.toString(), classes.toString(), "dev.lease", "lease-sample-quickstart");
        assertThat(processing.exitCode()).as("AOT processing:%n%s", processing.output()).isZero();

        List<Path> generated;
        try (Stream<Path> files = Files.walk(sources)) {
            generated = files.filter(file -> file.toString().endsWith(".java")).toList();
        }
        assertThat(generated).as("generated sources").isNotEmpty();
        compile(generated, classpath, classes);
        StringBuilder metadata = new StringBuilder();
        try (Stream<Path> files = Files.walk(resources.resolve("META-INF/native-image"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".json")).toList()) {
                metadata.append(Files.readString(file).replace("\\/", "/")); // JSON may escape slashes
            }
        }
        assertThat(metadata).as("the starter's hints among those written for native-image")
                .contains("dev.lease.aop.LeasedExpressionRoot", "dev/lease/fence/*.sql",
                        "dev.lease.autoconfigure.EtcdLeaseProperties");

        List<Path> aotClasspath = new ArrayList<>(List.of(classes, resources));
        aotClasspath.addAll(classpath);
        Run run = java(aotClasspath, List.of("-Dspring.aot.enabled=true"), MAIN, "--spring.main.banner-mode=off");
        assertThat(run.exitCode()).as("the AOT-processed application:%n%s", run.output()).isZero();
        assertThat(run.output()).as("the AOT-processed application's output")
                .contains("Starting AOT-processed QuickstartApplication")
                .contains("account 1 balance after 10 concurrent deposits of 100: 1000")
                .contains("caller got LeaseLostException");
    }

    /** This module's classes and its dependencies, without its test classes (which are no part of the application). */
    private static List<Path> applicationClasspath() {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<Path> entries = new ArrayList<>();
        for (String entry : classpath.split(File.pathSeparator)) {
            if (!entry.isBlank() && !Path.of(entry).endsWith(Path.of("target", "test-classes"))) {
                entries.add(Path.of(entry).toAbsolutePath());
            }
        }
        return entries;
    }

    private static void compile(List<Path> sources, List<Path> classpath, Path classes) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> arguments = new ArrayList<>(List.of("-d", classes.toString(), "-parameters", "-proc:none",
                "-classpath", join(classpath)));
        sources.forEach(source -> arguments.add(source.toString()));
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, arguments.toArray(String[]::new));
        assertThat(status).as("javac on the generated sources:%n%s", errors.toString(StandardCharsets.UTF_8)).isZero();
    }

    private static Run java(List<Path> classpath, List<String> options, String main, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-cp", join(classpath)));
        command.addAll(options);
        command.add(main);
        command.addAll(List.of(args));
        Path log = Files.createTempFile("aot-run", ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean exited = process.waitFor(120 * TIME_FACTOR, TimeUnit.SECONDS);
            if (!exited) {
                process.destroyForcibly().waitFor();
            }
            String output = Files.readString(log);
            return new Run(exited ? process.exitValue() : -1, exited ? output : "(did not end in time)\n" + output);
        }
        finally {
            Files.deleteIfExists(log);
        }
    }

    private static String join(List<Path> classpath) {
        return classpath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator));
    }

    private record Run(int exitCode, String output) {
    }
}
