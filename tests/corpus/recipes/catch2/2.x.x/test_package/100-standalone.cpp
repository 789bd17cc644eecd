#include <catch2/catch.hpp>

TEST_CASE( "compiles and runs" ) {
    REQUIRE( true == !false );
}
