package dev.lease.autoconfigure.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.core.importer.Locations;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.LeaseBackend;

/**
 * The module graph of DESIGN.md §4, on the main classes of every lease module (all of them are on this module's test
 * classpath): dependencies point downwards only, and what is public in the engine's package is there for a reason.
 */
class ArchitectureTest {

    /**
     * The library's main classes only: not test classes, whether from a directory or from another module's test-jar
     * (which DO_NOT_INCLUDE_TESTS lets through), and not lease-test, the test support built on the library.
     */
    private static final JavaClasses LEASE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar") && !location.contains("lease-test"))
            .importPackages("dev.lease");

    /**
     * The modules built before this one whose test classes {@link #backendWrappersExtendTheForwardingBackend} checks
     * too: hand-written wrappers were test code as often as main code. Modules built after this one are left out, as
     * their class files may be older than their sources when this test runs.
     */
    private static final List<String> MODULES_WITH_TESTS_BUILT_BEFORE = List.of("lease-core", "lease-test",
            "lease-spring", "lease-zookeeper", "lease-redis", "lease-jdbc", "lease-kubernetes", "lease-etcd",
            "lease-spring-boot-autoconfigure");

    /** lease-core: the contract, the SPI, the engine, the in-memory backend. */
    private static final String[] CORE = {"dev.lease", "dev.lease.spi", "dev.lease.core", "dev.lease.memory"};

    /** Above the contract and the SPI: the engine and everything built on it. */
    private static final String[] ABOVE_THE_SPI = {"dev.lease.core..", "dev.lease.memory..", "dev.lease.aop..",
            "dev.lease.autoconfigure.."};

    @Test
    void coreUsesNoSpring() {
        (noClasses().that().resideInAnyPackage(CORE)
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..")
            .because("lease-core runs without Spring"))
                .check(LEASE);
    }

    @Test
    void springIntegrationUsesNoBoot() {
        (noClasses().that().resideInAPackage("dev.lease.aop..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework.boot..")
            .because("lease-spring serves plain Spring Framework applications"))
                .check(LEASE);
    }

    @Test
    void zookeeperUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.zookeeper..",
            "dev.lease.redis..", "dev.lease.jdbc..", "dev.lease.fence..", "dev.lease.kubernetes..", "dev.lease.etcd.."))
                .check(LEASE);
    }

    @Test
    void redisUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.redis..",
            "dev.lease.zookeeper..", "dev.lease.jdbc..", "dev.lease.fence..", "dev.lease.kubernetes..", "dev.lease.etcd.."))
                .check(LEASE);
    }

    @Test
    void jdbcUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.jdbc..",
            "dev.lease.zookeeper..", "dev.lease.redis..", "dev.lease.kubernetes..", "dev.lease.etcd.."))
                .check(LEASE);
    }

    @Test
    void kubernetesUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.kubernetes..",
            "dev.lease.zookeeper..", "dev.lease.redis..", "dev.lease.jdbc..", "dev.lease.fence..", "dev.lease.etcd.."))
                .check(LEASE);
    }

    @Test
    void etcdUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.etcd..",
            "dev.lease.zookeeper..", "dev.lease.redis..", "dev.lease.jdbc..", "dev.lease.fence..", "dev.lease.kubernetes.."))
                .check(LEASE);
    }

    @Test
    void fenceUsesOnlyTheContractAndTheSpi() {
        (backend("dev.lease.fence..",
            "dev.lease.zookeeper..", "dev.lease.redis..", "dev.lease.kubernetes..", "dev.lease.etcd.."))
                .check(LEASE);
    }

    @Test
    void onlyTheAutoConfigurationKnowsTheAutoConfiguration() {
        (noClasses()
            .that().resideOutsideOfPackage("dev.lease.autoconfigure..")
            .should().dependOnClassesThat().resideInAPackage("dev.lease.autoconfigure.."))
                .check(LEASE);
    }

    /**
     * As Spring Boot's cache auto-configuration: applications exclude or order the auto-configurations listed in
     * AutoConfiguration.imports; a backend's configuration is an imported detail they cannot name.
     */
    @Test
    void onlyAutoConfigurationsArePublicConfigurations() {
        (classes()
            .that().resideInAPackage("dev.lease.autoconfigure..")
            .and().areAnnotatedWith(org.springframework.context.annotation.Configuration.class)
            .and().areNotAnnotatedWith(org.springframework.boot.autoconfigure.AutoConfiguration.class)
            .should().notBePublic())
                .check(LEASE);
    }

    /** One slice per package, not per module: a cycle between two packages of one module counts too. */
    @Test
    void noPackageCycles() {
        (slices().assignedFrom(new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            String pkg = javaClass.getPackageName();
            return pkg.equals("dev.lease") || pkg.startsWith("dev.lease.") ? SliceIdentifier.of(pkg)
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the packages of dev.lease";
        }
    }).should().beFreeOfCycles())
                .check(LEASE);
    }

    /**
     * Public in the engine's package means used from another package (the auto-configuration, lease-spring, a plain
     * Spring configuration), never "public, but internal": such a type is package-private instead.
     */
    @Test
    void engineTypesArePublicOnlyWhenUsedElsewhere() {
        (classes()
            .that().resideInAPackage("dev.lease.core").and().arePublic().and().areTopLevelClasses()
            .should(beUsedOutsideTheirPackage())
            .andShould(notBeDocumentedAsInternal()))
                .check(LEASE);
    }

    /**
     * A wrapper of a backend extends {@link ForwardingLeaseBackend}, which forwards every SPI method by construction:
     * wrappers written by hand hid new capabilities of the wrapped backend (batched renewal, bounded calls) from the
     * engine three times. Main and test classes alike, lease-test's included.
     */
    @Test
    void backendWrappersExtendTheForwardingBackend() {
        (classes()
            .that().areAssignableTo(LeaseBackend.class).and().areNotInterfaces().and(holdABackend())
            .should().beAssignableTo(ForwardingLeaseBackend.class)
            .because("no hand-written SPI forwarding: a wrapper that forwards by hand hides every SPI method added "
                    + "after it was written"))
                .check(mainAndTestClasses());
    }

    /** Every class of the library on this module's classpath, and the test classes of the modules built before it. */
    private static JavaClasses mainAndTestClasses() {
        Set<Location> locations = new LinkedHashSet<>(Locations.ofPackage("dev.lease"));
        for (String module : MODULES_WITH_TESTS_BUILT_BEFORE) {
            Path dir = Path.of("..", module, "target", "test-classes").toAbsolutePath().normalize();
            if (!Files.isDirectory(dir)) {
                throw new IllegalStateException("No test classes at " + dir + ": build " + module + "'s tests first "
                        + "(./mvnw -pl lease-spring-boot-autoconfigure -am ...)");
            }
            locations.add(Location.of(dir));
        }
        return new ClassFileImporter().importLocations(locations);
    }

    private static DescribedPredicate<JavaClass> holdABackend() {
        return new DescribedPredicate<>("hold a field of type LeaseBackend") {
            @Override
            public boolean test(JavaClass type) {
                return type.getFields().stream().anyMatch(field -> field.getRawType().isAssignableTo(LeaseBackend.class));
            }
        };
    }

    private static ArchRule backend(String backend, String... otherBackends) {
        return noClasses().that().resideInAPackage(backend)
                .should().dependOnClassesThat().resideInAnyPackage(ABOVE_THE_SPI)
                .orShould().dependOnClassesThat().resideInAnyPackage(otherBackends)
                .because("a backend builds on the contract and the SPI only, so a third party can write one too");
    }

    private static ArchCondition<JavaClass> beUsedOutsideTheirPackage() {
        return new ArchCondition<>("be used outside their package") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                boolean used = type.getDirectDependenciesToSelf().stream()
                        .anyMatch(d -> !d.getOriginClass().getPackageName().equals(type.getPackageName()))
                        // A lambda passed to a public method shows as a call, not as a dependency on its type.
                        || LEASE.stream().filter(c -> !c.getPackageName().equals(type.getPackageName()))
                                .flatMap(c -> c.getMethodCallsFromSelf().stream())
                                .anyMatch(call -> call.getTarget().getRawParameterTypes().contains(type));
                if (!used) {
                    events.add(SimpleConditionEvent.violated(type, type.getName()
                            + " is public but used only in its own package: make it package-private"));
                }
            }
        };
    }

    private static final Pattern INTERNAL = Pattern.compile("\\binternal\\b|only for|not (part of the )?api");

    private static ArchCondition<JavaClass> notBeDocumentedAsInternal() {
        return new ArchCondition<>("not be documented as internal") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                Path source = Path.of("..", "lease-core", "src", "main", "java",
                        type.getName().replace('.', '/') + ".java");
                String text;
                try {
                    text = Files.readString(source).toLowerCase(Locale.ROOT);
                }
                catch (IOException ex) {
                    throw new UncheckedIOException("the source of " + type.getName() + " is not at " + source, ex);
                }
                if (INTERNAL.matcher(typeJavadoc(text)).find()) {
                    events.add(SimpleConditionEvent.violated(type, type.getName()
                            + " is public yet documented as internal: make it package-private or document it as API"));
                }
            }
        };
    }

    /** The javadoc right before the type's declaration. */
    private static String typeJavadoc(String source) {
        int declaration = source.indexOf("\npublic ");
        int end = declaration < 0 ? -1 : source.lastIndexOf("*/", declaration);
        int start = end < 0 ? -1 : source.lastIndexOf("/**", end);
        return start < 0 ? "" : source.substring(start, end);
    }
}
