package dev.lease.autoconfigure.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape issue 29 gave the code, kept: small rooms, and each module's tests beside its code. Each rule is also run
 * on a small tree that breaks it, so that a rule that stopped seeing anything would fail here too.
 */
class SourceRulesTest {

    /** As Redis's backend, the size aimed for: a class a newcomer can hold. */
    private static final int MAX_LINES = 400;

    @Test
    void noMainClassOfTheLibraryIsOverFourHundredLines() {
        assertThat(SourceTree.ofBuild().mainSourcesLongerThan(MAX_LINES))
                .as("split these by job, as the ZooKeeper and JDBC backends were").isEmpty();
    }

    @Test
    void theTestsOfAModulesClassesLiveInThatModule() {
        assertThat(SourceTree.ofBuild().testsOutsideTheirModule())
                .as("move these tests to the module of the code they test; the starter's end-to-end tests live in "
                        + "dev.lease.autoconfigure's packages").isEmpty();
    }

    @Test
    void theSizeRuleSeesALongClass(@TempDir Path checkout) throws IOException {
        write(checkout.resolve("lease-x/src/main/java/dev/lease/x/Small.java"), "package dev.lease.x;\n", 10);
        write(checkout.resolve("lease-x/src/main/java/dev/lease/x/Hall.java"), "package dev.lease.x;\n", MAX_LINES);
        write(checkout.resolve("lease-y/src/main/kotlin/dev/lease/y/Hall.kt"), "package dev.lease.y\n", MAX_LINES);

        assertThat(new SourceTree(checkout).mainSourcesLongerThan(MAX_LINES)).containsExactly(
                Path.of("lease-x/src/main/java/dev/lease/x/Hall.java") + " has 401 lines",
                Path.of("lease-y/src/main/kotlin/dev/lease/y/Hall.kt") + " has 401 lines");
    }

    @Test
    void theModuleRuleSeesATestOfAnotherModulesCode(@TempDir Path checkout) throws IOException {
        write(checkout.resolve("lease-x/src/main/java/dev/lease/x/X.java"), "package dev.lease.x;\n", 1);
        write(checkout.resolve("lease-x/src/test/java/dev/lease/x/inner/XTest.java"), "package dev.lease.x.inner;\n",
                1);
        write(checkout.resolve("lease-y/src/main/java/dev/lease/y/Y.java"), "package dev.lease.y;\n", 1);
        write(checkout.resolve("lease-y/src/test/java/dev/lease/x/XOverThereTest.java"), "package dev.lease.x;\n", 1);
        write(checkout.resolve("lease-y/src/test/kotlin/dev/lease/xy/XyTest.kt"), "package dev.lease.xy\n", 1);
        // A module of tests only (the fault suite) has no code its tests could sit beside.
        write(checkout.resolve("lease-z/src/test/java/dev/lease/x/ZTest.java"), "package dev.lease.x;\n", 1);

        assertThat(new SourceTree(checkout).testsOutsideTheirModule()).containsExactly(
                Path.of("lease-y/src/test/java/dev/lease/x/XOverThereTest.java")
                        + " is in package dev.lease.x, none of lease-y's [dev.lease.y]",
                Path.of("lease-y/src/test/kotlin/dev/lease/xy/XyTest.kt")
                        + " is in package dev.lease.xy, none of lease-y's [dev.lease.y]");
    }

    private static void write(Path file, String packageLine, int moreLines) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, packageLine + "\n".repeat(moreLines));
    }
}
