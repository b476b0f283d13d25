// fluxjac test fixture: a 2 x 1 x 1 box meshed with all four cell types. Below z = 0.3 an extruded
// layer: prisms over the triangulated left half, hexahedra over the structured right half; above it
// tetrahedra, with pyramids on the quadrilaterals of the right half. Gmsh 4: gmsh -3 hybrid_box.geo
lc = 0.3;
Point(1) = {0, 0, 0, lc}; Point(2) = {1, 0, 0, lc}; Point(3) = {2, 0, 0, lc};
Point(4) = {2, 1, 0, lc}; Point(5) = {1, 1, 0, lc}; Point(6) = {0, 1, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 5}; Line(3) = {5, 6}; Line(4) = {6, 1};
Line(5) = {2, 3}; Line(6) = {3, 4}; Line(7) = {4, 5};
Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};
Curve Loop(2) = {5, 6, 7, -2}; Plane Surface(2) = {2};
Transfinite Curve{2, 5, 6, 7} = 4;
Transfinite Surface{2}; Recombine Surface{2};
low[] = Extrude {0, 0, 0.3} { Surface{1, 2}; Layers{2}; Recombine; };
high[] = Extrude {0, 0, 0.7} { Surface{low[0], low[6]}; };
